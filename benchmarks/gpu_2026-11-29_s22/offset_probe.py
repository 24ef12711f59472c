"""Softmax 8192 x 8192 float32: does where the output lies, relative to the input, move the bandwidth? (Twenty-second
session, run f.) In the report our kernel writes into one buffer made once per shape (report.Outputs), while
Liger-Kernel's function allocates its output on every call, wherever the caching allocator finds room; its kernel
launched directly read 95.3-96.0% of copy where the function read 97.6-98.0 (fifteenth session). Here our kernel
(the report's own call, its output carved from one large buffer at a series of offsets), a device-to-device copy
into the same places, our kernel with a fresh torch.empty output each call, and Liger-Kernel's function, each timed
by course.timing.bench in 3 interleaved rounds after the report's warm-up; every output checked against torch.
Usage: PYTHONPATH=$PWD python benchmarks/gpu_2026-11-29_s22/offset_probe.py OUT.json"""
import json
import statistics
import sys
import tempfile

import torch

from course import timing
from kernels_ref import report

case = report.Case("softmax", (8192, 8192), "float32")
inputs = report.make_inputs(case, "cuda")
x = inputs["x"]
n_bytes = x.numel() * x.element_size()
MB = 1 << 20
OFFSETS = [0, 4096, 64 * 1024, MB, 2 * MB, 3 * MB, 5 * MB, 8 * MB, 16 * MB + 4096, 64 * MB]
big = torch.empty(n_bytes + max(OFFSETS) + MB, dtype=torch.uint8, device="cuda")


class At:
    """report.Outputs with the output at byte offset off of `big`."""
    def __init__(self, off):
        self.off = off

    def tensor(self, shape, dtype):
        return big[self.off:self.off + n_bytes].view(dtype).view(shape)


class Fresh:
    def tensor(self, shape, dtype):
        return torch.empty(shape, dtype=dtype, device="cuda")


loaded, tmp = {}, tempfile.mkdtemp()
ex = report.registry.get(report.reference_for(case))
report.ours(case, inputs, loaded, tmp, "cuda")  # loads the reference's namespace once
ns = loaded[ex.id]
ref = torch.softmax(x, dim=-1)
calls, where = {}, {}
for off in OFFSETS:
    calls[f"ours@{off}"] = lambda o=At(off): ex.run(ns, inputs, o)
    calls[f"copy@{off}"] = lambda off=off: big[off:off + n_bytes].view(torch.float32).view(x.shape).copy_(x)
    where[f"ours@{off}"] = where[f"copy@{off}"] = big.data_ptr() + off - x.data_ptr()
calls["ours fresh"] = lambda: ex.run(ns, inputs, Fresh())
try:
    from liger_kernel.ops.softmax import LigerSoftmaxFunction
    calls["liger"] = lambda: LigerSoftmaxFunction.apply(x)
except ImportError as e:
    print("no liger:", e)
out = {"device": torch.cuda.get_device_name(), "x_ptr": x.data_ptr(), "rows": []}
for name, fn in calls.items():
    y = fn()
    if not name.startswith("copy"):
        err = (y - ref).abs().max().item()
        print(f"{name}: max error {err:.3g}" + (f", output at x + {y.data_ptr() - x.data_ptr()}" if name in
                                                 ("liger", "ours fresh") else ""), flush=True)
        if name in ("liger", "ours fresh"):
            where[name] = y.data_ptr() - x.data_ptr()
report.warm(calls)
times = {n: [] for n in calls}
for k in range(3):
    for name in report.round_order(list(calls), k):
        times[name].append(timing.bench(calls[name]))
for name in calls:
    gbps = [2 * n_bytes / (ms * 1e-3) / 1e9 for ms in times[name]]
    out["rows"].append({"name": name, "y_minus_x": where.get(name), "gbps_rounds": gbps})
    print(f"{name:16s} y-x {where.get(name)!s:>14}: {statistics.median(gbps):7.0f} GB/s  (rounds "
          + ", ".join(f"{g:.0f}" for g in gbps) + ")", flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)
