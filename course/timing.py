"""Timing on the GPU: CUDA events, L2 flushed between repetitions, median reported.

    ms = bench(lambda: kernel(x, y))
    gbps(nbytes, ms)                 # GB/s, 1 GB = 1e9 bytes
    copy_gbps(nbytes)                # the roofline: a device-to-device copy of nbytes

Bandwidth counts bytes read plus bytes written, for the copy as for your kernel,
so "% of copy" compares like with like.
"""
from __future__ import annotations

import statistics

from . import mode
from .errors import NeedsGPU


def _need_gpu(what: str) -> None:
    if not mode.GPU:
        raise NeedsGPU(f"{what} needs a GPU: CPU mode runs kernels in an interpreter, "
                       "whose speed says nothing about the GPU")


_FLUSH = {}
_LINE = 128  # bytes in an L2 cache line


def _evicting_read():
    """A Triton kernel that reads one float of every 128-byte line of a buffer with the evict_last policy, then
    gives each line back the normal priority (PTX applypriority, after the load in program order: measured on an
    H200, the next kernel then reads as after the coldest flush), and stores one sum per program."""
    import triton
    import triton.language as tl

    @triton.jit
    def evict_last_lines(buf, out, n_lines, LINES: tl.constexpr):
        line = tl.program_id(0) * LINES + tl.arange(0, LINES)
        ptrs = buf + tl.minimum(line, n_lines - 1) * 32  # 32 floats = 128 bytes; the tail's lanes on the last line
        v = tl.load(ptrs, mask=line < n_lines, other=0.0, eviction_policy="evict_last")
        done = tl.inline_asm_elementwise("applypriority.global.L2::evict_normal [$1], 128;\n mov.u32 $0, 0;",
                                         "=r,l", [ptrs], dtype=tl.int32, is_pure=False, pack=1)
        tl.store(out + tl.program_id(0), tl.sum(v, 0) + tl.sum(done, 0).to(tl.float32))
    return evict_last_lines


def flush_l2() -> None:
    """Leave nothing in L2 that the next kernel could use, so that it starts cold.

    Overwriting a buffer twice the size of L2 is not enough on its own: lines that a kernel loaded with the
    evict_last policy (Triton's eviction_policy="evict_last"; torch.compile's softmax reads its input that way)
    outlive that ordinary traffic. On an H200 a softmax timed right after
    such a kernel read the same input about 2% faster than after anything else (Liger-Kernel's 8192 x 8192
    float32: 98.0% of copy against 95.8-96.1), and not after the same kernel reading another buffer. So the buffer
    is first read with evict_last too (evicting those lines: among lines of one priority the least recently used
    go first), its lines are given back the normal priority (left at evict_last, they made the next kernel read
    1-2% faster), and then it is overwritten as before. GPUs older than compute capability 8.0 have no
    L2 eviction priorities (PTX's L2::evict_last and applypriority need sm_80): there the overwrite alone."""
    import torch
    buf = _FLUSH.get("buf")
    if buf is None:
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        buf = _FLUSH["buf"] = torch.empty(max(2 * l2, 1 << 20), dtype=torch.uint8, device="cuda")
        n_lines = buf.numel() // _LINE
        _FLUSH["read"] = (_evicting_read(), buf.view(torch.float32), n_lines,
                          torch.empty((n_lines + 1023) // 1024, device="cuda")) \
            if torch.cuda.get_device_capability() >= (8, 0) else None
    if _FLUSH["read"] is not None:
        kernel, floats, n_lines, out = _FLUSH["read"]
        kernel[(out.numel(),)](floats, out, n_lines, LINES=1024)
    buf.zero_()


def bench(fn, *, warmup: int = 5, reps: int = 30, flush: bool = True, gate_s: float | None = None) -> float:
    """Median time of fn() in milliseconds, on the GPU's clock.

    Before each timed call the GPU is kept busy (a sleep kernel) for longer than fn takes to
    launch from Python, so the start event fires with fn's kernels already queued: the time is
    the kernels', not the Python launch path's (which can exceed a small kernel's run time).
    gate_s: that sleep in seconds (default: 3 times fn's median launch time, at least 0.2 ms)."""
    _need_gpu("timing")
    import time

    import torch
    cpu = []
    for _ in range(warmup):
        t0 = time.perf_counter()
        fn()
        cpu.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    gate = int((gate_s if gate_s is not None else max(2e-4, 3 * statistics.median(cpu))) * 2e9)  # s -> cycles at
    # most 2 GHz: at a lower clock the sleep only lasts longer
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for s, e in zip(starts, ends):
        if flush:
            flush_l2()
        torch.cuda._sleep(gate)
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def gbps(nbytes: int, ms: float) -> float:
    return nbytes / (ms * 1e-3) / 1e9


def copy_gbps(nbytes: int, **kw) -> float:
    """Bandwidth of a device-to-device copy that reads nbytes/2 and writes nbytes/2."""
    _need_gpu("measuring the copy bandwidth")
    import torch
    half = nbytes // 2
    src = torch.empty(half, dtype=torch.uint8, device="cuda").random_()
    dst = torch.empty_like(src)
    ms = bench(lambda: dst.copy_(src), **kw)
    return gbps(2 * half, ms)


def row_sweep(fns: dict, widths, rows: int = 8192, dtype=None, output=None) -> tuple[dict, list]:
    """GB/s of each fn(x, y) over (rows, width) inputs (float32 unless dtype), and the copy
    bandwidth per width. y is like x unless output(x) makes it (a row reduction: one per row).

    Bytes per call: x read once + y written once."""
    _need_gpu("a bandwidth sweep")
    import torch
    dtype = dtype or torch.float32
    out = {name: [] for name in fns}
    copy = []
    for w in widths:
        x = torch.randn(rows, w, device="cuda", dtype=dtype)
        y = output(x) if output else torch.empty_like(x)
        nbytes = x.numel() * x.element_size() + y.numel() * y.element_size()
        for name, fn in fns.items():
            out[name].append(gbps(nbytes, bench(lambda: fn(x, y))))
        copy.append(copy_gbps(nbytes))
    return out, copy


def copy_sweep(sizes_bytes) -> list:
    """Copy bandwidth for each total size (read + write), L2 not flushed: small sizes show the cache."""
    _need_gpu("measuring the copy bandwidth")
    return [copy_gbps(n, flush=False) for n in sizes_bytes]
