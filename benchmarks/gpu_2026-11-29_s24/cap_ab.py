"""Does the register cap (maxnreg=40) change Chapter 5's RMSNorm kernel, 16384 x 4096 bfloat16 at 8 warps? Run e found
38 registers a thread with and without it (regs_probe.py), so the cap cannot change occupancy. Here (twenty-fourth
session, run f): the SASS of both compilations compared (cuobjdump -sass of each cubin), and the two timed side by
side in the report's harness (kernels_ref.report.measure: interleaved rounds, each in its own order, ROUNDS rounds),
with Liger-Kernel's. Usage: PYTHONPATH=$PWD:/tmp/liger python .../cap_ab.py OUT.json"""
import json
import re
import subprocess
import sys
import tempfile

import torch

from course import timing
from kernels_ref import report
from kernels_ref.ch05_fused_norms.rmsnorm_triton import rmsnorm_kernel

ROUNDS = 8
doc = {"gpu": torch.cuda.get_device_name(), "ptxas": report.pin_ptxas(None)}
case = report.Case("rmsnorm", (16384, 4096), "bfloat16")
inputs = report.make_inputs(case, "cuda")
x, g = inputs["x"], inputs["gamma"]
ys = {}


def launch(cap):
    y = ys.setdefault(cap, torch.empty_like(x))

    def call():
        rmsnorm_kernel[(x.shape[0],)](x, g, y, 4096, x.stride(0), y.stride(0), float(inputs["eps"]), BLOCK=4096,
                                      num_warps=8, **({"maxnreg": cap} if cap else {}))
        return y
    return call


sass = {}
calls = {cap: launch(cap) for cap in (None, 40)}
for cap in (None, 40):  # the compiled kernel of each launch: warmup() returns it without running it
    ck = rmsnorm_kernel.warmup(x, g, ys[cap], 4096, x.stride(0), ys[cap].stride(0), float(inputs["eps"]), BLOCK=4096,
                               num_warps=8, grid=(x.shape[0],), **({"maxnreg": cap} if cap else {}))
    f = tempfile.mktemp(suffix=".cubin")
    open(f, "wb").write(ck.asm["cubin"])
    out = subprocess.run(["cuobjdump", "-sass", f], capture_output=True, text=True).stdout
    sass[str(cap)] = re.findall(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);", out)  # the instructions, addresses left out
    getattr(ck, "_init_handles", lambda: None)()
    doc[f"n_regs_{cap}"] = ck.n_regs
doc["sass_identical"] = sass["None"] == sass["40"]
doc["sass_lines"] = {k: len(v) for k, v in sass.items()}
print({k: doc[k] for k in ("sass_identical", "sass_lines", "n_regs_None", "n_regs_40")}, flush=True)
from liger_kernel.ops.rms_norm import LigerRMSNormFunction  # noqa: E402

impls = {"uncapped": report.checked(case, inputs, calls[None]), "maxnreg 40": report.checked(case, inputs, calls[40]),
         "liger": lambda: LigerRMSNormFunction.apply(x, g, report.EPS)}
report.warm(impls, report.WARM_S, torch.cuda.synchronize)
doc["copy_gbps"] = timing.copy_gbps(report.COPY_BYTES)
doc["records"] = report.measure(case, impls, timing.bench, rounds=ROUNDS)
for r in doc["records"]:
    r["pct_copy"] = 100 * r["gbps"] / doc["copy_gbps"] if r.get("gbps") else None
    print(r["impl"], round(r["pct_copy"], 1), [round(1e3 * v, 1) for v in r["ms_rounds"]], flush=True)
json.dump(doc, open(sys.argv[1], "w"), indent=1)
