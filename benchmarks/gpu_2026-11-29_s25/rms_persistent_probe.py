"""Twenty-fifth session, run c (H200): rms_persistent.py's candidates against Chapter 5's RMSNorm reference and
Liger-Kernel, side by side in the report's harness (kernels_ref.report.measure: ROUNDS interleaved rounds, each in
its own order; every candidate's output checked by the exercise's own check first, report.checked), on the report's
two RMSNorm shapes. Registers and spills of each compiled candidate recorded. Usage:
PYTHONPATH=$PWD:/tmp/liger python .../rms_persistent_probe.py OUT.json"""
import importlib.util
import json
import os
import sys

import torch

from course import timing
from kernels_ref import report
from kernels_ref.ch05_fused_norms.rmsnorm_triton import rmsnorm_triton

spec = importlib.util.spec_from_file_location("rp", os.path.join(os.path.dirname(__file__), "rms_persistent.py"))
rp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rp)
ROUNDS = 6
doc = {"gpu": torch.cuda.get_device_name(), "ptxas": report.pin_ptxas(None), "cases": []}
from liger_kernel.ops.rms_norm import LigerRMSNormFunction  # noqa: E402

CANDS = {(16384, 4096): [(pf, per, w) for pf in (True, False) for per in (2, 4, 8) for w in (8,)] + [(True, 4, 4)],
         (4096, 16384): [(pf, per, w) for pf in (True, False) for per in (1, 2, 4) for w in (16,)]}
for shape, cands in CANDS.items():
    case = report.Case("rmsnorm", shape, "bfloat16")
    inputs = report.make_inputs(case, "cuda")
    x, g, eps = inputs["x"], inputs["gamma"], float(inputs["eps"])
    ref_y = torch.empty_like(x)
    impls = {"reference": report.checked(case, inputs, lambda: rmsnorm_triton(x, g, ref_y, eps) or ref_y),
             "liger": lambda: LigerRMSNormFunction.apply(x, g, report.EPS)}
    regs = {}
    for pf, per, w in cands:
        name = f"{'prefetch' if pf else 'plain'} {per}/SM w{w}"
        y = torch.empty_like(x)
        call = (lambda pf=pf, per=per, w=w, y=y: rp.rmsnorm_persistent(x, g, y, eps, per_sm=per, warps=w,
                                                                       prefetch=pf))
        impls[name] = report.checked(case, inputs, call)
    for name, c in impls.items():
        if isinstance(c, Exception):
            print(shape, name, "FAILED", c, flush=True)
    # registers: every compiled specialization of the candidate kernel (one per PREFETCH x warps)
    try:
        for cache in rp.rmsnorm_persistent_kernel.device_caches.values():
            for key, ck in cache[0].items():
                regs[str(key)[-160:]] = {"n_regs": ck.n_regs, "n_spills": ck.n_spills}
    except Exception as e:  # noqa: BLE001  (Triton's cache layout is not an API: recorded, not fatal)
        regs["error"] = repr(e)[:200]
    report.warm({k: v for k, v in impls.items() if not isinstance(v, Exception)}, report.WARM_S,
                torch.cuda.synchronize)
    copy = timing.copy_gbps(report.COPY_BYTES)
    recs = report.measure(case, impls, timing.bench, rounds=ROUNDS)
    for r in recs:
        r["pct_copy"] = 100 * r["gbps"] / copy if r.get("gbps") else None
        print(shape, f"{r['impl']:22}", round(r["pct_copy"], 1) if r["pct_copy"] else r.get("error"),
              [round(1e3 * v, 1) for v in r.get("ms_rounds", [])], flush=True)
    doc["cases"].append({"shape": list(shape), "copy_gbps": copy, "records": recs, "regs": regs})
    print(shape, "regs", regs, flush=True)
json.dump(doc, open(sys.argv[1], "w"), indent=1)
