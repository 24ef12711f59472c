"""What the kernel timed after torch.compile reads from DRAM (twenty-third session, run d; softmax 8192 x 8192 float32).

Run c: Liger-Kernel's function reads 98.0% of copy when timed right after torch.compile's softmax and 95.8-96.1 after
anything else; ours 96.0 against 95.5-95.7. If inductor's kernel leaves lines of x in L2 that timing.bench's flush
(a 2 x L2 memset) does not evict (e.g. loaded with evict_last), the next kernel reads part of x from L2, not DRAM.
Here, in one process: timing.bench(PRED) as the report runs it, then timing.bench(TARGET) inside an NVTX range
"target"; run it under Nsight Compute with --nvtx --nvtx-include target/ --cache-control none --clock-control none,
the kernels whose names contain softmax, after the 5 warm-up calls: DRAM bytes read and written, L2 hit rate, time.
Usage: python benchmarks/gpu_2026-11-29_s23/l2_ncu_probe.py PRED TARGET   (PRED: compile | torch | none;
TARGET: liger | ours)"""
import sys
import tempfile

import torch

from course import timing
from kernels_ref import report

pred, target = sys.argv[1:3]
report.pin_ptxas(None)
case = report.Case("softmax", (8192, 8192), "float32")
inputs = report.make_inputs(case, "cuda")
x = inputs["x"]
if target == "liger":
    from liger_kernel.ops.softmax import LigerSoftmaxFunction
    fn = lambda: LigerSoftmaxFunction.apply(x)  # noqa: E731
else:
    fn = report.ours(case, inputs, {}, tempfile.mkdtemp(), "cuda")
compiled = torch.compile(lambda t: torch.softmax(t, dim=-1), dynamic=False)
preds = {"compile": lambda: compiled(x), "torch": lambda: torch.softmax(x, dim=-1), "none": None}
fn()
if preds[pred]:
    preds[pred]()
    timing.bench(preds[pred])
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("target")
ms = timing.bench(fn)
torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print(f"{pred} -> {target}: {2 * x.numel() * 4 / (ms * 1e-3) / 1e9:.0f} GB/s (events)")
