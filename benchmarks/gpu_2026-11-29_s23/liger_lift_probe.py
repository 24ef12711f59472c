"""Is the lift of Liger-Kernel's softmax (8192 x 8192 float32, H200) a property of where its output lies?
(Twenty-third session.)

Since the fifteenth session: Liger-Kernel's function reads about 98% of copy in the report, which times torch and
torch.compile between the kernels, and about 95.5 where they are not timed; our kernel reads about 95.5-96 in both.
Its kernel's machine code is that of our copy of it (sixteenth session, g), which was not lifted. One difference
never tested with the peers in the rotation: every peer (torch, torch.compile, Liger-Kernel's function) takes a
fresh output from the caching allocator on every call, while the report's call of ours writes into one buffer made
once (report.Outputs). Fresh outputs of the same size reuse the block the previous call freed, so with the peers in
the rotation ours with a fresh output writes where Liger-Kernel's function writes.

Impls: ours as the report calls it (kept output), ours with a fresh output each call, Liger-Kernel's function, its
kernel launched directly into a fresh and into a kept output, and (stage "spot") ours into an output taken from
the allocator right after the peers ran and kept. Stages, in this order, in one process: "alone" (those), "eager"
(torch's softmax timed in the rotation), "peers" (torch and torch.compile, as the report), "out" (instead of the
peers, torch's softmax into a kept output: a slow neighbour that allocates nothing), "alone again", "spot".
Each stage: report.warm, then 3 rounds in report.round_order, course.timing.bench; GB/s per round, % of the largest
copy measured in the process; the output addresses each fresh impl got (offsets from x, in MiB).
Usage: PYTHONPATH=$PWD[:/tmp/liger] python benchmarks/gpu_2026-11-29_s23/liger_lift_probe.py OUT.json"""
import json
import statistics
import sys
import tempfile

import torch

from course import timing
from kernels_ref import report

doc = {"gpu": torch.cuda.get_device_name(), "ptxas": report.pin_ptxas(None), "stages": [], "copy_gbps": []}
case = report.Case("softmax", (8192, 8192), "float32")
inputs = report.make_inputs(case, "cuda")
x = inputs["x"]
n, cols = x.shape
nbytes = 2 * x.numel() * x.element_size()
MiB = 1 << 20

from liger_kernel.ops.softmax import LigerSoftmaxFunction  # noqa: E402
from liger_kernel.ops.softmax import _softmax_single_block_forward_kernel as liger_kernel  # noqa: E402

loaded, tmp = {}, tempfile.mkdtemp()
ours_kept = report.checked(case, inputs, report.ours(case, inputs, loaded, tmp, "cuda"))
assert not isinstance(ours_kept, Exception), ours_kept
ex = report.registry.get(report.reference_for(case))
ns = loaded[ex.id]
seen: dict = {}


def note(name, y):
    seen.setdefault(name, set()).add((y.data_ptr() - x.data_ptr()) // MiB)
    return y


class Fresh:
    def tensor(self, shape, dtype):
        return torch.empty(shape, dtype=dtype, device="cuda")


class Given:
    def __init__(self, y):
        self.y = y

    def tensor(self, shape, dtype):
        return self.y


kept_liger = torch.empty_like(x)
kept_torch = torch.empty_like(x)


def liger_direct(y):
    liger_kernel[(n,)](y, cols, x, cols, cols, BLOCK_SIZE=8192, num_warps=16)
    return y


base = {
    "ours": ours_kept,
    "ours fresh": lambda: note("ours fresh", ex.run(ns, inputs, Fresh())),
    "liger function": lambda: note("liger function", LigerSoftmaxFunction.apply(x)),
    "liger kernel fresh": lambda: note("liger kernel fresh", liger_direct(torch.empty_like(x))),
    "liger kernel kept": lambda: liger_direct(kept_liger),
}
compiled = torch.compile(lambda t: torch.softmax(t, dim=-1), dynamic=False)
eager = {"torch": lambda: torch.softmax(x, dim=-1)}
peers = {"torch": lambda: torch.softmax(x, dim=-1), "torch.compile": lambda: compiled(x)}
out_peer = {"torch out": lambda: torch.ops.aten._softmax.out(x, -1, False, out=kept_torch)}

ref = torch.softmax(x, dim=-1)
for name, fn in {**base, **peers, **out_peer}.items():
    err = (fn() - ref).abs().max().item()
    print(f"{name}: max error {err:.3g}", flush=True)
    assert err < 1e-5, name
seen.clear()


def stage(label, calls):
    doc["copy_gbps"].append(timing.copy_gbps(report.COPY_BYTES))
    report.warm(calls, sync=torch.cuda.synchronize)
    times = {k: [] for k in calls}
    for k in range(3):
        for name in report.round_order(list(calls), k):
            times[name].append(timing.bench(calls[name]))
    rows = {name: [nbytes / (ms * 1e-3) / 1e9 for ms in ts] for name, ts in times.items()}
    doc["stages"].append({"stage": label, "gbps_rounds": rows,
                          "out_mib_from_x": {k: sorted(v) for k, v in seen.items()}})
    seen.clear()
    json.dump(doc, open(sys.argv[1], "w"), indent=1)


stage("alone", base)
stage("eager", {**base, **eager})
stage("peers", {**base, **peers})
stage("out", {**base, **out_peer})
stage("alone again", base)
for _ in range(3):  # the allocator's state after the peers, as in the report
    peers["torch"]()
    peers["torch.compile"]()
spot = LigerSoftmaxFunction.apply(x)  # where the function's output lies now; kept
doc["spot_mib_from_x"] = (spot.data_ptr() - x.data_ptr()) // MiB
stage("spot", {**base, **peers, "ours at spot": lambda: ex.run(ns, inputs, Given(spot))})

copy = max(doc["copy_gbps"])
for st in doc["stages"]:
    print(f"--- {st['stage']}  (fresh outputs at MiB from x: {st['out_mib_from_x']})")
    for name, g in st["gbps_rounds"].items():
        print(f"  {name:20s} {statistics.median(g) / copy * 100:6.1f}%  (rounds "
              + ", ".join(f"{v:.0f}" for v in g) + " GB/s)", flush=True)
print(f"copy {copy:.0f} GB/s (per stage {', '.join(f'{c:.0f}' for c in doc['copy_gbps'])}); "
      f"spot at x + {doc['spot_mib_from_x']} MiB")
