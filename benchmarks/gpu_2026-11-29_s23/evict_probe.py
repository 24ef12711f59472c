"""Is the lift after torch.compile lines of x left in L2 by inductor's evict_last loads? (Twenty-third session, run e;
softmax 8192 x 8192 float32, H200.)

Run c: the bench timed right after torch.compile's softmax reads higher (Liger-Kernel 98.0% of copy against
95.8-96.1, ours 96.0 against 95.5-95.7), and only that one. Run d: inductor's kernel reads each row twice, the first
time with eviction_policy='evict_last'. If lines loaded with evict_last outlive timing.bench's flush (a memset of twice
the L2, normal priority), the next kernel finds part of x in L2. Predecessors here, each timed by timing.bench as the
report does, then timing.bench(target) for target in (Liger-Kernel's function, ours): torch.compile's softmax; a
Triton kernel that reads x with evict_last / with the default policy; the same evict_last kernel reading another
buffer of x's size; nothing; and torch.compile or the evict_last read of x followed by a "strong flush" (a read of
2 x L2 bytes with evict_last, then the usual memset). 4 rounds, shuffled (seeded); % of the largest copy measured.
Usage: PYTHONPATH=$PWD:/tmp/liger python benchmarks/gpu_2026-11-29_s23/evict_probe.py OUT.json"""
import json
import random
import statistics
import sys
import tempfile

import torch
import triton
import triton.language as tl

from course import timing
from kernels_ref import report


@triton.jit
def read_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVICT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, eviction_policy=EVICT)
    tl.store(out_ptr + tl.program_id(0), tl.sum(v, 0))


def reader(buf, evict):
    flat = buf.view(-1)
    out = torch.empty(triton.cdiv(flat.numel(), 4096), device="cuda")
    return lambda: read_kernel[(out.numel(),)](flat, out, flat.numel(), BLOCK=4096, EVICT=evict)


doc = {"gpu": torch.cuda.get_device_name(), "ptxas": report.pin_ptxas(None), "copy_gbps": [], "rows": []}
case = report.Case("softmax", (8192, 8192), "float32")
inputs = report.make_inputs(case, "cuda")
x = inputs["x"]
nbytes = 2 * x.numel() * x.element_size()
other = torch.randn_like(x)
l2 = torch.cuda.get_device_properties(0).L2_cache_size
big = torch.empty(2 * l2 // 4, device="cuda")
strong_read = reader(big, "evict_last")


def strong_flush():
    strong_read()
    timing.flush_l2()


from liger_kernel.ops.softmax import LigerSoftmaxFunction  # noqa: E402

ours = report.checked(case, inputs, report.ours(case, inputs, {}, tempfile.mkdtemp(), "cuda"))
assert not isinstance(ours, Exception), ours
compiled = torch.compile(lambda t: torch.softmax(t, dim=-1), dynamic=False)
targets = {"liger": lambda: LigerSoftmaxFunction.apply(x), "ours": ours}
preds = {"torch.compile": lambda: compiled(x), "read x evict_last": reader(x, "evict_last"),
         "read x default": reader(x, ""), "read other evict_last": reader(other, "evict_last")}
for name in ("read x evict_last", "read x default"):
    preds[name]()
torch.cuda.synchronize()
doc["copy_gbps"].append(timing.copy_gbps(report.COPY_BYTES))
report.warm({**targets, **preds}, sync=torch.cuda.synchronize)
labels = list(preds) + ["nothing", "torch.compile + strong flush", "read x evict_last + strong flush"]
rng = random.Random(1)
for r in range(4):
    order = [(p, t) for p in labels for t in targets]
    rng.shuffle(order)
    for p, t in order:
        base = p.replace(" + strong flush", "")
        if base != "nothing":
            timing.bench(preds[base])
        if p.endswith("strong flush"):
            strong_flush()
        ms = timing.bench(targets[t])
        doc["rows"].append({"round": r, "pred": p, "target": t, "gbps": nbytes / (ms * 1e-3) / 1e9})
doc["copy_gbps"].append(timing.copy_gbps(report.COPY_BYTES))
json.dump(doc, open(sys.argv[1], "w"), indent=1)
copy = max(doc["copy_gbps"])
for t in targets:
    for p in labels:
        g = [row["gbps"] for row in doc["rows"] if row["pred"] == p and row["target"] == t]
        print(f"{t:6s} after {p:34s} {100 * statistics.median(g) / copy:5.1f}%  (rounds "
              + ", ".join(f"{100 * v / copy:.1f}" for v in g) + ")", flush=True)
print(f"copy {copy:.0f} GB/s; L2 {l2 / 2**20:.0f} MiB")
