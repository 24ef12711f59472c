"""Registers per thread of Chapter 5's RMSNorm reference kernel as compiled on this GPU (Triton's n_regs, n_spills of
the launched kernel), 16384 x 4096 bfloat16 at 8 warps: no cap and maxnreg 48, 40. (Twenty-fourth session, run e.)
--pin: compiled by the ptxas the benchmark report pins (kernels_ref.report.pin_ptxas), else by Triton's own (as the
grader's runners compile).
Usage: PYTHONPATH=$PWD python benchmarks/gpu_2026-11-29_s24/regs_probe.py OUT.json [--pin]"""
import json
import sys

import torch

from kernels_ref.ch05_fused_norms.rmsnorm_triton import rmsnorm_kernel

ptxas = None
if "--pin" in sys.argv:
    from kernels_ref import report
    ptxas = report.pin_ptxas(None)
x = torch.randn(16384, 4096, device="cuda").to(torch.bfloat16)
g = torch.randn(4096, device="cuda").to(torch.bfloat16)
y = torch.empty_like(x)
props = torch.cuda.get_device_properties(0)
doc = {"gpu": torch.cuda.get_device_name(), "regs_per_sm": getattr(props, "regs_per_multiprocessor", None),
       "ptxas": ptxas, "rows": []}
for cap in (None, 48, 40):
    k = rmsnorm_kernel[(x.shape[0],)](x, g, y, 4096, x.stride(0), y.stride(0), 1e-6, BLOCK=4096, num_warps=8,
                                      **({"maxnreg": cap} if cap else {}))
    torch.cuda.synchronize()
    doc["rows"].append({"maxnreg": cap, "n_regs": k.n_regs, "n_spills": k.n_spills})
    print(doc["rows"][-1], flush=True)
json.dump(doc, open(sys.argv[1], "w"), indent=1)
