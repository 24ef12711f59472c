"""Which flush leaves L2 cold? (Twenty-third session, run h; H200.)

Runs g1/g2 (the report with the new course.timing.flush_l2) read the 268 MB cases about 2-3% lower than the
twenty-second session's reports (RMSNorm 16384 x 4096 bfloat16: ours 3811-3823 GB/s against 3913-3935, Liger-Kernel
3871-3873 against 3907-3933), the larger cases level. Either the old flush (a memset of 2 x L2) left lines the next
kernel could use, or the new one (an evict_last read of the buffer, its lines given back the normal priority, then
the memset) leaves L2 in a state that slows the next kernel. Here timing.bench with five flushes in turn: "memset"
(the old one), "new" (the current one), "new, no applypriority", "read 2x" (a default-policy read of the 2 x L2
buffer, then the memset), "read 16x" (a default-policy read of 16 x L2, then the memset: the coldest we can make it);
impls: our RMSNorm and Liger-Kernel's (16384 x 4096 bfloat16, the report's calls), our softmax 16384 x 4096 bfloat16,
a device copy of the same bytes. 3 rounds, flushes in a shuffled order each round (seeded); GB/s.
Usage: PYTHONPATH=$PWD:/tmp/liger python benchmarks/gpu_2026-11-29_s23/flush_probe.py OUT.json"""
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


report.pin_ptxas(None)
l2 = torch.cuda.get_device_properties(0).L2_cache_size
timing.flush_l2()
buf = timing._FLUSH["buf"]
new_flush = timing.flush_l2
big = torch.zeros(16 * l2 // 4, device="cuda")
read2, read2_last, read16 = reader(buf.view(torch.float32), ""), reader(buf.view(torch.float32), "evict_last"), \
    reader(big, "")
flushes = {"memset": lambda: buf.zero_(), "new": new_flush,
           "new, no applypriority": lambda: (read2_last(), buf.zero_()),
           "read 2x": lambda: (read2(), buf.zero_()), "read 16x": lambda: (read16(), buf.zero_())}
impls, nbytes = {}, {}
loaded, tmp = {}, tempfile.mkdtemp()
for kernel in ("rmsnorm", "softmax"):
    case = report.Case(kernel, (16384, 4096), "bfloat16")
    inputs = report.make_inputs(case, "cuda")
    calls = report.calls(case, inputs, loaded, tmp, "cuda")
    impls[f"{kernel} ours"] = report.checked(case, inputs, calls["flashcourse"])
    if kernel == "rmsnorm":
        impls[f"{kernel} liger"] = calls["liger"]
    nbytes[f"{kernel} ours"] = nbytes[f"{kernel} liger"] = 2 * inputs["x"].numel() * 2
src = torch.empty(16384 * 4096 * 2, dtype=torch.uint8, device="cuda").random_()
dst = torch.empty_like(src)
impls["copy"], nbytes["copy"] = (lambda: dst.copy_(src)), 2 * src.numel()
report.warm(impls, sync=torch.cuda.synchronize)
rows = []
rng = random.Random(2)
for r in range(3):
    order = list(flushes)
    rng.shuffle(order)
    for f in order:
        timing.flush_l2 = flushes[f]
        for name in report.round_order(list(impls), r):
            ms = timing.bench(impls[name])
            rows.append({"round": r, "flush": f, "impl": name, "gbps": nbytes[name] / (ms * 1e-3) / 1e9})
timing.flush_l2 = new_flush
json.dump({"gpu": torch.cuda.get_device_name(), "l2": l2, "rows": rows}, open(sys.argv[1], "w"), indent=1)
for name in impls:
    print(name.ljust(14), " | ".join(
        f"{f}: {statistics.median([x['gbps'] for x in rows if x['flush'] == f and x['impl'] == name]):.0f}"
        for f in flushes), flush=True)
