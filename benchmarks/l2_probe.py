"""How fast is L2 next to HBM on this GPU? The question behind the long-row softmax (Chapter 3): its kernels read each
part of a row twice, the second time from L2, so every byte of x crosses L2 twice and every byte of y once. If L2
does not outrun HBM by enough, that second read, not HBM, is the limit.

    python benchmarks/l2_probe.py OUT.json

One process, a few seconds. Per buffer size (MiB): a read-only Triton kernel (each program sums BLOCK elements with
16-byte loads, one float per program written) and a copy (torch's y.copy_(x)), each called REPS times back to back
in one CUDA graph (no launch gaps) between two CUDA events, with no flush between calls, so a buffer that fits L2 is
read from L2 after the first call. GB/s counts the bytes each call asks for (read: the buffer; copy: read + write).
The 1 GiB rows are HBM (the course's copy bandwidth, course.timing.copy_gbps, is the same quantity with the flush).
Prints one line per record; writes {"gpu", "l2_mib", "records": [{"op", "mib", "gbps", "ms"}]}.
"""
from __future__ import annotations

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

BLOCK = 8192
REPS = 100


@triton.jit
def _read_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(x, axis=0))


def _time(fn) -> float:
    """Milliseconds per call: REPS calls captured in one CUDA graph (no launch gaps between them), the graph
    replayed 5 times after one untimed replay; the fastest replay."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(REPS):
            fn()
    graph.replay()
    best = float("inf")
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) / REPS)
    return best


def main(argv) -> int:
    if len(argv) != 2 or not torch.cuda.is_available():
        print(__doc__)
        return 2
    props = torch.cuda.get_device_properties(0)
    doc = {"gpu": torch.cuda.get_device_name(), "l2_mib": props.L2_cache_size / 2**20, "records": []}
    for mib in (4, 8, 16, 24, 1024):  # 1024 MiB: REPS x 2 GiB copied, a few seconds
        n = mib * 2**20 // 4
        x = torch.randn(n, device="cuda")
        y = torch.empty_like(x)
        out = torch.empty(triton.cdiv(n, BLOCK), device="cuda")
        grid = (triton.cdiv(n, BLOCK),)
        ms = _time(lambda: _read_kernel[grid](x, out, n, BLOCK=BLOCK, num_warps=8))
        assert torch.allclose(out.sum(), x.sum(), rtol=1e-3, atol=1e-1)  # the kernel did read x
        for op, t, nbytes in (("read", ms, 4 * n), ("copy", _time(lambda: y.copy_(x)), 8 * n)):
            r = {"op": op, "mib": mib, "ms": t, "gbps": nbytes / (t * 1e-3) / 1e9}
            doc["records"].append(r)
            print(f"{doc['gpu']}: {op:4} {mib:5} MiB {r['gbps']:7.0f} GB/s", flush=True)
        x = y = out = None
        torch.cuda.empty_cache()
    with open(argv[1], "w") as f:
        json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
