"""Does torch.compile having run in the process lift some kernels' readings? (H200, softmax 8192 x 8192 float32)

    python benchmarks/compile_lift_probe.py OUT.json

On an H200 (archived run gpu_2026-11-28_s15/a-d), Liger-Kernel's softmax kernel reads about 95.5% of copy in a process
where torch.compile never ran and about 98 in processes where torch and torch.compile are timed beside it, while a copy
of it in our code stays at 95.5 in both. Here, in one process and in this order: four
kernels timed (stage "bare"); then torch eager's softmax run 20 times and the four timed again ("after eager");
then torch.compile's softmax compiled and run 20 times and the four timed again ("after compile"); twice more
("again"). Around each stage the process's CUDA limits, cache and shared-memory configuration and environment are
recorded, to see what torch.compile changed. The four: Liger's kernel launched directly (its function's settings),
our copy of it (softmax_8192_probe.row_cand: 16 warps, .ca, .cs, exp and division), our one-row kernel at 32 warps
(the shipped choice) and at 16. course.timing.bench, three rounds per stage; GB/s, and % of the largest copy
timed in the run (one denominator: each stage's own copy moved by 1.2% between stages in gpu_2026-11-28_s15/f,
which divided by each stage's copy, so its percentages moved with the copy while no kernel's GB/s did). The
kernels' outputs are checked after the bare stage (the check runs torch eager, which must not run before it).
"""
from __future__ import annotations

import json
import os
import sys
import time


import torch  # noqa: E402

import sweeplib  # noqa: E402
from kernels_ref import report  # noqa: E402
from kernels_ref.ch03_online_softmax import softmax_split_rows as split  # noqa: E402
from softmax_8192_probe import row_cand  # noqa: E402


def state() -> dict:
    out = {"env": {k: v for k, v in os.environ.items() if any(s in k for s in ("TRITON", "CUDA", "TORCH", "NCCL"))}}
    try:
        import cupy
        rt = cupy.cuda.runtime
        out["limits"] = {}
        for i, name in enumerate(("stack", "printf_fifo", "malloc_heap", "dev_runtime_sync_depth",
                                  "dev_runtime_pending_launch", "max_l2_fetch_granularity", "persisting_l2")):
            try:
                out["limits"][name] = rt.deviceGetLimit(i)
            except Exception as e:  # noqa: BLE001
                out["limits"][name] = f"{type(e).__name__}"
        for f in ("deviceGetCacheConfig", "deviceGetSharedMemConfig"):
            try:
                out[f] = getattr(rt, f)()
            except Exception as e:  # noqa: BLE001
                out[f] = f"{type(e).__name__}"
    except ImportError:
        out["limits"] = "no cupy"
    try:
        import triton.knobs as knobs
        out["triton_knobs"] = {k: repr(getattr(knobs.nvidia, k, None)) for k in dir(knobs.nvidia)
                               if not k.startswith("_")}
    except Exception as e:  # noqa: BLE001
        out["triton_knobs"] = f"{type(e).__name__}: {e}"
    return out


def main(argv):
    if not sweeplib.gpu_args(argv, __doc__):
        return 2
    from liger_kernel.ops.softmax import _softmax_single_block_forward_kernel as liger_kernel

    from course import timing
    t0 = time.time()
    doc = {"gpu": torch.cuda.get_device_name(), "ptxas": report.pin_ptxas(None), "stages": []}
    if doc["ptxas"] is None:
        raise SystemExit("the ptxas to pin was not found (kernels_ref.report.pin_ptxas)")
    x = report.make_inputs(report.Case("softmax", (8192, 8192), "float32"), "cuda")["x"]
    n, cols = x.shape
    ys = {k: torch.empty_like(x) for k in ("liger", "clone", "w32", "w16")}

    def liger():
        liger_kernel[(n,)](ys["liger"], cols, x, cols, cols, BLOCK_SIZE=8192, num_warps=16)

    def clone():
        row_cand[(n,)](x, ys["clone"], cols, cols, cols, BLOCK=8192, CA=True, CS=True, EXP=True, num_warps=16)
    kernels = {"liger kernel": liger, "our copy of it": clone,
               "ours w32": lambda: split.softmax_rows(x, ys["w32"], warps=32),
               "ours w16": lambda: split.softmax_rows(x, ys["w16"], warps=16)}
    nbytes = 2 * n * cols * 4
    compiled = torch.compile(lambda t: torch.softmax(t, dim=1))

    def stage(name):
        copy = timing.copy_gbps(report.COPY_BYTES)
        gbps = {}
        for rnd in range(3):
            for k in report.round_order(list(kernels), rnd):
                gbps.setdefault(k, []).append(round(timing.gbps(nbytes, timing.bench(kernels[k])), 1))
        doc["stages"].append({"stage": name, "copy_gbps": copy, "gbps": gbps, "state": state()})
        print(name, f"(copy {copy:.0f} GB/s), GB/s:", "  ".join(f"{k} {v}" for k, v in gbps.items()), flush=True)
    stage("bare")
    want = torch.softmax(x, dim=1)  # after the bare stage: this runs torch eager
    for f in kernels.values():
        f()
    torch.cuda.synchronize()
    for y in ys.values():
        torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-6)
    for _ in range(20):
        torch.softmax(x, dim=1)
    torch.cuda.synchronize()
    stage("after eager")
    for _ in range(20):
        compiled(x)
    torch.cuda.synchronize()
    stage("after compile")
    stage("again")
    before, after = doc["stages"][0]["state"], doc["stages"][2]["state"]
    doc["changed"] = {k: [before.get(k), after.get(k)] for k in set(before) | set(after)
                      if before.get(k) != after.get(k)}
    best = max(st["copy_gbps"] for st in doc["stages"])
    for st in doc["stages"]:
        st["pct_of_best_copy"] = {k: [round(100 * v / best, 1) for v in vals] for k, vals in st["gbps"].items()}
        print(st["stage"], "% of the run's best copy:", st["pct_of_best_copy"])
    doc["elapsed_s"] = round(time.time() - t0, 1)
    with open(argv[1], "w") as f:
        json.dump(doc, f, indent=1, default=str)
    print("changed by the stages up to torch.compile:", json.dumps(doc["changed"], default=str)[:3000])
    print(f"done in {doc['elapsed_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
