"""pred_probe.py for any case of the report, with the report's own calls (twenty-third session, run i): after the new
flush, does the impl timed just before ours or Liger-Kernel's still move its reading? Runs g1/g2 (the report, new
flush) read RMSNorm 16384 x 4096 bfloat16 ours 3811-3823 GB/s against Liger-Kernel's 3871-3873, run h (no peers in
the rotation) 3878-3894 against 3896-3911. For each predecessor (the report's impls and nothing), timing.bench(pred)
then timing.bench(target) for target in (ours, Liger-Kernel); 3 rounds, shuffled (seeded); % of the largest copy.
Usage: PYTHONPATH=$PWD:/tmp/liger python benchmarks/gpu_2026-11-29_s23/pred_probe_case.py KERNEL ROWS COLS DTYPE OUT"""
import json
import random
import statistics
import sys
import tempfile

import torch

from course import timing
from kernels_ref import report

kernel, rows, cols, dtype, out_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
report.pin_ptxas(None)
case = report.Case(kernel, (rows, cols), dtype)
inputs = report.make_inputs(case, "cuda")
impls = report.calls(case, inputs, {}, tempfile.mkdtemp(), "cuda")
impls["flashcourse"] = report.checked(case, inputs, impls["flashcourse"])
assert not any(isinstance(v, Exception) for v in impls.values()), impls
nbytes = report.ARRAYS.get(kernel, 2) * rows * cols * torch.empty((), dtype=getattr(torch, dtype)).element_size()
doc = {"gpu": torch.cuda.get_device_name(), "case": [kernel, rows, cols, dtype], "copy_gbps": [], "rows": []}
doc["copy_gbps"].append(timing.copy_gbps(report.COPY_BYTES))
report.warm(impls, sync=torch.cuda.synchronize)
preds = list(impls) + ["nothing"]
targets = ["flashcourse", "liger"]
rng = random.Random(3)
for r in range(3):
    order = [(p, t) for p in preds for t in targets]
    rng.shuffle(order)
    for p, t in order:
        if p != "nothing":
            timing.bench(impls[p])
        ms = timing.bench(impls[t])
        doc["rows"].append({"round": r, "pred": p, "target": t, "gbps": nbytes / (ms * 1e-3) / 1e9})
doc["copy_gbps"].append(timing.copy_gbps(report.COPY_BYTES))
json.dump(doc, open(out_path, "w"), indent=1)
copy = max(doc["copy_gbps"])
for t in targets:
    for p in preds:
        g = [row["gbps"] for row in doc["rows"] if row["pred"] == p and row["target"] == t]
        print(f"{t:11s} after {p:13s} {100 * statistics.median(g) / copy:5.1f}%  (rounds "
              + ", ".join(f"{100 * v / copy:.1f}" for v in g) + ")", flush=True)
print(f"copy {copy:.0f} GB/s")
