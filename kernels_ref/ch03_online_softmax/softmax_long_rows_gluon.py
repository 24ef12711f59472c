"""Candidate (not a notebook cell; not used by the references): softmax over very long rows with each chunk held in
SHARED memory, written in Gluon. Measured once (NVIDIA H200, archived run gpu_2026-11-26_s10/m): correct
(the check's edge cases and every timed shape), but at 35.5% of copy (float32 1024 x 131072), 33.2% (bf16 2048 x
131072) and 19.2% (bf16 1024 x 262144) for its best configs, against 69.8 / 65.2 / 60.7% for the fast path in the
same process: half the speed. The cause is not known; the design below is the intended one. Gluon:
triton.experimental.gluon, Hopper sm_90a (TMA, mbarriers). Same contract as the split path of
softmax_split_rows.py: softmax(x) along each row into y, x and y 2-D with contiguous rows, float32, float16 or
bfloat16 in and out (computed in float32). It raises ValueError for what it does not support (it never falls back:
a benchmark must not time another kernel under this name): columns not a multiple of 256, a row stride that TMA
cannot describe, K = ceil(cols / CHUNK) above the SM count (co-residency, below), no GPU, no Gluon.

Why shared memory instead of registers. softmax_split_rows.split_rows_kernel reads x once by holding a row's chunk
in registers while it waits for the row's other chunks: a program's life is

    load the chunk (memory)  ->  (m, d), publish, wait for the row (compute, then idle)  ->  write y (memory)

CHUNK 16384 float32 is 64 KiB of registers, a quarter of an SM's 256 KiB register file; with the addresses and the
exponentials ptxas gives it 212 registers a thread at 4 warps, so 2 (float32) to 4 (bfloat16) programs fit an SM.
Memory is busy only while some resident program is in a memory phase. Today's fast path (softmax_split_rows.CONFIGS),
measured in the course's runs: on an H100 (copy 2980 GB/s over 132 SMs: 22.6 KB per microsecond per SM) 87.2% of
copy for float32 1024x131072 (this register kernel) and 78.4% for bfloat16 2048x131072 (softmax_long_rows.py, two
reads of each part, the second from L2; the register kernel 73.1-73.4%); on an H200 (copy 4140-4245 GB/s: 31-32 KB
per microsecond per SM, the same 132 SMs, about the same clock) the same choices reach 70% and 65.5%. The H200's
memory moves a chunk about 1.4x faster while the compute and wait phases take as long as on the H100, so the share
of time in which no resident program has memory traffic outstanding grows: with 2 programs an SM, whenever both are
computing or waiting, that SM's memory pipe is empty.

Little's law says how many bytes must be in flight per SM to keep memory busy: bandwidth per SM x latency. With a
loaded DRAM latency of 1-1.5 microseconds (an assumption, not measured here) that is 23-34 KB per SM on the H100 and
32-48 KB on the H200 (reads and writes together). The register kernel has 2 x 64 KiB per SM at best, and only while
both programs are in a memory phase; in the compute and wait phases it has none. Here a chunk costs no registers,
only shared memory (227 KB per SM on sm_90, one program may take all of it):

    float32,  CHUNK 8192,  STAGES 2: 2 x 32 KiB = 64 KiB a program, 3 programs an SM: 192 KiB of chunks per SM
    bfloat16, CHUNK 8192,  STAGES 2: 2 x 16 KiB = 32 KiB a program, 6 programs an SM
    bfloat16, CHUNK 16384, STAGES 2: 2 x 32 KiB = 64 KiB a program, 3 programs an SM

and the data moves asynchronously: one thread issues a TMA copy of the whole chunk (global -> shared, its
completion counted in bytes on an mbarrier) and the program does something else until it needs the data; y is
written back by a TMA store from shared memory, which the program does not wait for either (tma.store_wait only
before the buffer is reused). So while a program computes or waits for its row, its next chunk is already loading
and its last y is still being stored, and the other 2-5 programs of its SM are in any phase. No program phase
leaves the SM without memory traffic, which is what the H200 needs more than the H100.

A program (persistent grid: SMs x PER_SM programs, each looping over tickets ticket t = chunk t % K of row t // K,
taken from an atomic counter; the co-residency argument of softmax_split_rows.py):

    take ticket t, TMA-load its chunk into ring slot 0
    loop:
        take the next ticket t', TMA-load its chunk into the next slot (store_wait first: the slot's last y is out)
        wait for t's chunk (mbarrier); from shared memory: m = max(chunk), d = sum 2^((x - m) log2 e)
        publish (m, d) for t: the partial stored, then the row's counter incremented (release)
        if t' is of the same row: wait for its chunk, compute and publish its (m, d) too (see "hangs")
        wait until the row's counter reaches K (acquire); M = max m_k, D = sum d_k 2^((m_k - M) log2 e)
        y = 2^((x - M) log2 e) / D from shared memory, written over x in the same slot; TMA-store the slot
        t = t'

At most three reads of the chunk from shared memory (max, sum, y) and one write (y) per element, besides the TMA's
write and read: at most 24 bytes of shared-memory traffic per float32 element against shared memory's 128 bytes a
clock, 5 elements a clock per SM, where DRAM at 4245 GB/s needs about 2 float32 (4 bfloat16) elements a clock per SM.
Two exponentials per element (the sum, then y): 16 a clock per SM on the special-function units, so 8 elements a
clock; bfloat16 at 4 elements a clock uses half of them.

Hangs, and why there are none. A program waits for its row's other chunks while holding up to two tickets: t
(published before the wait) and t' (its chunk loading). If t' is of the same row as t, the program would wait for
itself; so t' is then published before the wait. If t' is of a later row, every ticket of t's row was taken before
t' (tickets are handed out in order) by a program that is running, and each of those publishes it before any wait
of its own row or, if it holds it as its t', right after the wait on an earlier row, which completes by induction
on rows. The lowest unfinished row's tickets that are not taken yet are taken by programs that are not waiting:
fewer than K programs can be waiting on that row (each holds one of its fewer than K taken tickets), and at least
one program per SM is resident, so K <= SMs is enough (checked: else ValueError). A program not yet resident has no
ticket. It assumes the GPU is this kernel's while it runs (no MPS limits, no other kernel holding SMs).
Each ring slot's mbarrier completes once per load; ticket j of a program (j = 0, 1, ...) uses slot j % STAGES and
waits parity (j // STAGES) & 1; a slot is reloaded only after its previous load was waited (STAGES >= 2).

TMA. A box has at most 256 elements per dimension, and a float32 row of 131072 columns is 512 KiB: so the
descriptors view x and y as 3-D (rows, cols / 256, 256) (strides: the row stride, 256, 1) and a chunk is the box
[1, CHUNK / 256, 256] at (row, k * CHUNK / 256, 0): one TMA instruction per chunk (CHUNK / 256 <= 256 rows: CHUNK
<= 65536). A last chunk past the row's end: TMA fills the missing 256-column rows of the box with zeros (masked to
-inf before the max) and clips them from the store, row by row, so no chunk ever touches another row. That is why
cols must be a multiple of 256 (else the last 256-column row of the view would run into the next row), and the
row stride times the element size a multiple of 16 bytes (TMA's rule for strides).

What ptxas makes of it (sm_90a, compiled without a GPU, triton 3.6.0 / 3.7.1, the timed widths; no spills in any
SWEEP config): float32 CHUNK 8192, 4 warps: 89 / 86 registers, 65680 B of shared memory (two 32 KiB slots, the
barriers and 128 B of reduction scratch); CHUNK 4096, 4 warps: 48 / 56; 8 warps: 48. bfloat16 CHUNK 8192, 4 warps:
80 (6 programs an SM use 61440 of the 65536 registers); CHUNK 16384, 4 warps: 161 / 167 (3 an SM fit). The compiler
reads each value from shared memory once for the max and the sum (it keeps the tile's values between the two
passes, in registers that are free again before the wait), then once more for y. A partial last chunk (a width that
is no multiple of CHUNK) costs a few registers more (bfloat16 8192, 4 warps: 88 in 3.6.0).
The wait's acquire: an atomic add of 0 whose result is unused is dropped when Triton lowers to LLVM (so
softmax_long_rows.wait_partials compiles to an acquire only because it uses the result the same way); here its
result masks the partials' loads and it compiles to ld.global.gpu.acquire.

Counters: as softmax_split_rows.py (ws[0] tickets, ws[1] exits, ws[2 + row] the row's counter; the kernel resets
them, so no memset per call). Gluon does not run in Triton's interpreter: this file is checked on a CPU by compiling
it for sm_90a (compile_offline; tests/test_softmax_long_rows_gluon.py: no spills, TMA and mbarrier waits in the
PTX) and on a GPU by benchmarks/softmax_gluon_check.py (outputs against torch.softmax, then % of copy).
"""
from __future__ import annotations

from typing import NamedTuple

import triton

from kernels_ref import sm_count

try:  # Gluon's Hopper module: triton >= 3.5 (checked: 3.6.0, 3.7.1)
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    # a CTA-wide barrier: gl.thread_barrier in triton 3.6.0, renamed gl.barrier in 3.7
    _cta_barrier = gl.thread_barrier if hasattr(gl, "thread_barrier") else gl.barrier
    HAS_GLUON = True
except ImportError:  # pragma: no cover - older triton
    HAS_GLUON = False

LOG2E = 1.4426950408889634
BOX = 256  # columns of one row of the 3-D view (TMA: at most 256 elements per box dimension)
SMEM_PER_SM = 228 * 1024  # sm_90: 228 KiB per SM, of which 1 KiB is reserved per resident block
SMEM_LIMIT = 227 * 1024  # bytes one block may use


class Config(NamedTuple):
    CHUNK: int        # columns per ticket (a multiple of TILE; CHUNK / 256 <= 256)
    num_warps: int    # warps per program
    per_sm: int       # programs per SM in the persistent grid (more than fit is harmless: they start later)
    stages: int = 2   # ring slots per program (>= 2: the next ticket's chunk loads while this one is worked on)
    TILE: int = 2048  # columns read from shared memory into registers at once (a multiple of 256)

    def name(self) -> str:
        return f"gluon-c{self.CHUNK}-w{self.num_warps}-p{self.per_sm}-s{self.stages}-t{self.TILE}"


# Guesses until benchmarks/softmax_gluon_check.py has measured SWEEP on an H100 and an H200 (not yet run).
# float16 takes bfloat16's entries (same element size).
CONFIGS = {
    "float32": Config(8192, 4, 3, 2),    # 64 KiB a program, 3 an SM (192 KiB); K = 16 at 131072 columns
    "bfloat16": Config(8192, 4, 6, 2),   # 32 KiB a program, 6 an SM (192 KiB); K = 16 / 32 at 131072 / 262144
}
CONFIGS["float16"] = CONFIGS["bfloat16"]
SWEEP = {
    "float32": [CONFIGS["float32"], Config(8192, 4, 2, 3), Config(4096, 4, 6, 2), Config(4096, 4, 4, 3),
                Config(8192, 8, 3, 2), Config(16384, 8, 1, 3, 4096)],
    "bfloat16": [CONFIGS["bfloat16"], Config(8192, 4, 4, 3), Config(16384, 4, 3, 2, 4096), Config(4096, 4, 8, 3),
                 Config(8192, 8, 3, 2), Config(16384, 8, 2, 2, 4096)],
}
SWEEP["float16"] = SWEEP["bfloat16"]


def smem_bytes(cfg: Config, itemsize: int) -> int:
    """Ring slots + their mbarriers (Gluon's own scratch for reductions comes on top: a few hundred bytes)."""
    return cfg.stages * cfg.CHUNK * itemsize + 8 * cfg.stages


def programs_per_sm(cfg: Config, itemsize: int) -> int:
    """How many programs of cfg fit an SM by shared memory and threads. Registers: ptxas's counts (module
    docstring) let SWEEP's per_sm fit at the timed widths (tests/test_softmax_long_rows_gluon.py checks it)."""
    by_smem = SMEM_PER_SM // (smem_bytes(cfg, itemsize) + 1024 + 1024)  # + the block's reserve + Gluon's scratch
    return max(0, min(by_smem, 2048 // (32 * cfg.num_warps), 32))


def check_config(cfg: Config, itemsize: int) -> None:
    """ValueError naming the first thing wrong with cfg."""
    if cfg.TILE % BOX or cfg.CHUNK % cfg.TILE or not 0 < cfg.CHUNK // BOX <= 256:
        raise ValueError(f"softmax_gluon: {cfg}: CHUNK a multiple of TILE, TILE of 256, CHUNK <= 65536")
    if cfg.TILE & (cfg.TILE - 1) or cfg.CHUNK & (cfg.CHUNK - 1):
        raise ValueError(f"softmax_gluon: {cfg}: CHUNK and TILE must be powers of 2")
    if cfg.stages < 2 or cfg.num_warps not in (1, 2, 4, 8, 16) or cfg.per_sm < 1:
        raise ValueError(f"softmax_gluon: {cfg}: stages >= 2, num_warps in 1..16, per_sm >= 1")
    if cfg.TILE // BOX < cfg.num_warps:  # the tile's 256-column rows are spread over the warps
        raise ValueError(f"softmax_gluon: {cfg}: TILE / 256 must be at least num_warps")
    if smem_bytes(cfg, itemsize) + 1024 > SMEM_LIMIT:
        raise ValueError(f"softmax_gluon: {cfg} needs {smem_bytes(cfg, itemsize)} B of shared memory")


if HAS_GLUON:

    @gluon.jit
    def _issue_load(x_desc, slot, bar, t, K: gl.constexpr, NB: gl.constexpr):
        """TMA copy of ticket t's chunk (box [1, NB, 256] at (row, k * NB, 0)) into slot, completing bar."""
        row = t // K
        mbarrier.expect(bar, x_desc.block_type.nbytes)  # the full box counts, out-of-bounds rows included
        tma.async_copy_global_to_shared(x_desc, [row, (t - row * K) * NB, 0], bar, slot)

    @gluon.jit
    def _chunk_stats(slot, k, cols, CHUNK: gl.constexpr, TILE: gl.constexpr, EVEN: gl.constexpr,
                     layout: gl.constexpr):
        """(m, d) of chunk k from shared memory: m = max, d = sum 2^((x - m) log2 e); two reads of the slot.
        Columns past the row's end (a last partial chunk, zero-filled by TMA) count as -inf."""
        TB: gl.constexpr = TILE // 256
        r = gl.arange(0, TB, layout=gl.SliceLayout(1, layout))  # the tile's 256-column rows
        lim = (cols - k * CHUNK) // 256  # 256-column rows of this chunk inside the row (cols % 256 == 0)
        mx = gl.full([TB, 256], -float("inf"), gl.float32, layout)
        for i in gl.static_range(CHUNK // TILE):
            x = slot.slice(i * TB, TB).load(layout).to(gl.float32)
            if not EVEN:
                x = gl.where((r < lim - i * TB)[:, None], x, -float("inf"))
            mx = gl.maximum(mx, x)
        m = gl.max(gl.max(mx, axis=1), axis=0)
        base = gl.where(m == -float("inf"), 0.0, m)  # a chunk of -inf: e = d = 0, no (-inf) - (-inf)
        acc = gl.zeros([TB, 256], gl.float32, layout)
        for i in gl.static_range(CHUNK // TILE):
            x = slot.slice(i * TB, TB).load(layout).to(gl.float32)
            if not EVEN:
                x = gl.where((r < lim - i * TB)[:, None], x, -float("inf"))
            acc += gl.exp2((x - base) * 1.4426950408889634)
        return m, gl.sum(gl.sum(acc, axis=1), axis=0)

    @gluon.jit
    def _publish(part_ptr, t, cnt, m, d):
        """softmax_long_rows.publish in Gluon: the partial stored, then counted (release: the partial first)."""
        gl.store(part_ptr + 2 * t, m)
        gl.store(part_ptr + 2 * t + 1, d)
        _cta_barrier()
        gl.atomic_add(cnt, 1, sem="release")

    @gluon.jit
    def _row_stats(part_ptr, cnt, row, K: gl.constexpr, KP: gl.constexpr, num_warps: gl.constexpr):
        """softmax_long_rows.wait_partials, then the merge: wait until the row's counter reaches K (acquire), load
        the K partials and return (M, 1 / D) with M = 0 standing for a row of -inf (then D = 0 and y = NaN)."""
        n = gl.load(cnt, volatile=True)
        while n < K:
            n = gl.load(cnt, volatile=True)
        # Acquire: the K partials are seen after this. Its result must be used: an atomic add of 0 whose result
        # is unused is dropped when Triton lowers it to LLVM (seen in the PTX of 3.6.0 and 3.7.1, Gluon and Triton
        # alike: softmax_long_rows.wait_partials had none before its fix). n >= K here, so the mask is kk < K.
        n = gl.atomic_add(cnt, 0, sem="acquire")
        _cta_barrier()  # one thread acquired (the others get n through shared memory after a barrier anyway)
        kl: gl.constexpr = gl.BlockedLayout([1], [32], [num_warps], [0])
        kk = gl.arange(0, KP, layout=kl)
        q = part_ptr + 2 * (row * K + kk)
        live = kk < gl.minimum(n, K)
        ms = gl.load(q, mask=live, other=-float("inf"), volatile=True)
        ds = gl.load(q + 1, mask=live, other=0.0, volatile=True)
        big_m = gl.max(ms, axis=0)
        mb = gl.where(big_m == -float("inf"), 0.0, big_m)
        big_d = gl.sum(gl.where(ms == -float("inf"), 0.0, ds * gl.exp2((ms - mb) * 1.4426950408889634)), axis=0)
        return mb, 1.0 / big_d

    @gluon.jit
    def _write_y(slot, mb, inv, CHUNK: gl.constexpr, TILE: gl.constexpr, layout: gl.constexpr):
        """y = 2^((x - M) log2 e) / D over the slot, in place (each thread rewrites what it read). Columns past the
        row's end get garbage that the TMA store clips."""
        TB: gl.constexpr = TILE // 256
        for i in gl.static_range(CHUNK // TILE):
            tile = slot.slice(i * TB, TB)
            x = tile.load(layout).to(gl.float32)
            tile.store((gl.exp2((x - mb) * 1.4426950408889634) * inv).to(slot.dtype))

    @gluon.jit
    def softmax_gluon_kernel(x_desc, y_desc, part_ptr, ws_ptr, rows, cols, n_programs,
                             K: gl.constexpr, KP: gl.constexpr, CHUNK: gl.constexpr, TILE: gl.constexpr,
                             STAGES: gl.constexpr, EVEN: gl.constexpr):
        """Persistent: tickets from ws[0] until none is left; ticket t is chunk t % K of row t // K (module
        docstring). x_desc, y_desc: 3-D (rows, cols / 256, 256) views, box [1, CHUNK / 256, 256]."""
        NB: gl.constexpr = CHUNK // 256
        num_warps: gl.constexpr = gl.num_warps()
        VEC: gl.constexpr = 128 // x_desc.dtype.primitive_bitwidth  # 16-byte shared-memory accesses
        layout: gl.constexpr = gl.BlockedLayout([1, VEC], [1, 32], [num_warps, 1], [1, 0])
        slots = gl.allocate_shared_memory(x_desc.dtype, [STAGES, 1, NB, 256], x_desc.layout)
        ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        for i in gl.static_range(STAGES):
            mbarrier.init(ready.index(i), count=1)  # completed by the TMA's byte count

        tickets = rows * K
        t = gl.atomic_add(ws_ptr, 1)
        if t < tickets:
            _issue_load(x_desc, slots.index(0), ready.index(0), t, K, NB)
        j = 0    # this program's tickets so far: ticket j uses slot j % STAGES, parity (j // STAGES) & 1
        pub = 0  # 1: t's partial was published already (it was the t' of a ticket of the same row)
        while t < tickets:
            row = t // K
            k = t - row * K
            s = j % STAGES
            cnt = ws_ptr + 2 + row
            tn = gl.atomic_add(ws_ptr, 1)  # the next ticket: its chunk loads while this one is worked on
            sn = (j + 1) % STAGES
            if tn < tickets:
                tma.store_wait(STAGES - 2)  # slot sn's last y (ticket j + 1 - STAGES) has left shared memory
                _issue_load(x_desc, slots.index(sn), ready.index(sn), tn, K, NB)
            slot = slots.index(s).reshape([NB, 256])
            if pub == 0:
                mbarrier.wait(ready.index(s), (j // STAGES) & 1)
                m, d = _chunk_stats(slot, k, cols, CHUNK, TILE, EVEN, layout)
                _publish(part_ptr, t, cnt, m, d)
            pub = 0
            if tn < tickets:
                rn = tn // K
                if rn == row:  # else this program would wait for its own unpublished partial
                    mbarrier.wait(ready.index(sn), ((j + 1) // STAGES) & 1)
                    slot_n = slots.index(sn).reshape([NB, 256])
                    mn, dn = _chunk_stats(slot_n, tn - rn * K, cols, CHUNK, TILE, EVEN, layout)
                    _publish(part_ptr, tn, cnt, mn, dn)
                    pub = 1
            mb, inv = _row_stats(part_ptr, cnt, row, K, KP, num_warps)
            _write_y(slot, mb, inv, CHUNK, TILE, layout)
            fence_async_shared()  # the generic-proxy writes of y before the async-proxy (TMA) read
            _cta_barrier()   # every warp's part of y is written before one thread issues the store
            tma.async_copy_shared_to_global(y_desc, [row, k * NB, 0], slots.index(s))
            left = gl.atomic_add(cnt, 1)  # second add: past the wait; the row's last one resets its counter
            gl.atomic_xchg(cnt, 0, mask=left == 2 * K - 1)
            t = tn
            j += 1
        tma.store_wait(0)  # the last y has left shared memory before the block exits
        for i in gl.static_range(STAGES):
            mbarrier.invalidate(ready.index(i))
        done = gl.atomic_add(ws_ptr + 1, 1, sem="acq_rel")  # after this program's last ticket add
        gl.atomic_xchg(ws_ptr, 0, mask=done == n_programs - 1)  # the grid's last program: counters back to 0
        gl.atomic_xchg(ws_ptr + 1, 0, mask=done == n_programs - 1)


def _layout(cfg: Config, dtype_name: str):
    """The slots' shared layout: plain row-major (no swizzle: the box's inner dimension is 256 elements, more
    than any swizzle span; threads read 16 consecutive bytes each, which has no bank conflicts)."""
    bits = {"float32": 32, "bfloat16": 16, "float16": 16}[dtype_name]
    return gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=bits, rank=3)


def constexprs(cfg: Config, cols: int) -> dict:
    k = triton.cdiv(cols, cfg.CHUNK)
    return dict(K=k, KP=max(2, triton.next_power_of_2(k)), CHUNK=cfg.CHUNK, TILE=cfg.TILE, STAGES=cfg.stages,
                EVEN=cols % cfg.CHUNK == 0)


_WORKSPACE: dict = {}  # (device, stream) -> int32 counters, zero between calls (the kernel resets them)


def _counters(x, rows):
    import torch
    key = (x.device, torch.cuda.current_stream(x.device).cuda_stream)
    ws = _WORKSPACE.get(key)
    if ws is None or ws.numel() < rows + 2:
        ws = torch.zeros(max(rows, 1024) + 2, dtype=torch.int32, device=x.device)
        _WORKSPACE[key] = ws
    return ws


def reset_counters():
    """Zero the cached counters (after a launch that failed or was wrong: a correct one leaves them at zero)."""
    for ws in _WORKSPACE.values():
        ws.zero_()




def softmax_gluon(x, y, config: Config | None = None, programs: int | None = None):
    """softmax(x) along each row into y (2-D, rows contiguous, same shape and dtype; float32, float16 or bfloat16)
    on an sm_90 GPU. config: CONFIGS[dtype] unless given; programs: the persistent grid (default SMs x per_sm).
    ValueError for what it does not support (module docstring)."""
    import torch
    if not HAS_GLUON:
        raise ValueError("softmax_gluon: this triton has no triton.experimental.gluon Hopper module")
    if not x.is_cuda or torch.cuda.get_device_capability(x.device)[0] != 9:
        raise ValueError("softmax_gluon: needs a Hopper (sm_90) GPU: TMA and mbarriers, and programs that wait "
                         "for each other (no interpreter)")
    name = str(x.dtype).removeprefix("torch.")
    if name not in CONFIGS or y.dtype != x.dtype or y.shape != x.shape or x.dim() != 2:
        raise ValueError("softmax_gluon: x, y 2-D of one shape and dtype (float32, float16, bfloat16)")
    rows, cols = x.shape
    if rows == 0 or cols == 0:
        return
    isz = x.element_size()
    if x.stride(1) != 1 or y.stride(1) != 1 or cols % BOX or any((t.stride(0) * isz) % 16 or t.data_ptr() % 16
                                                                for t in (x, y)):
        raise ValueError("softmax_gluon: rows contiguous, cols a multiple of 256, row strides and base pointers "
                         "16-byte aligned (TMA)")
    cfg = config or CONFIGS[name]
    check_config(cfg, isz)
    sms = sm_count(x.device)
    k = triton.cdiv(cols, cfg.CHUNK)
    if k > sms:
        raise ValueError(f"softmax_gluon: K = {k} chunks of a row exceed the {sms} SMs (co-residency)")
    n = programs if programs is not None else sms * cfg.per_sm
    n = max(1, min(n, rows * k))
    if n < k:
        raise ValueError(f"softmax_gluon: {n} programs cannot hold the {k} chunks of a row at once")
    layout = _layout(cfg, name)
    nb = cfg.CHUNK // BOX

    def desc(t):
        return TensorDescriptor(t, [rows, cols // BOX, BOX], [t.stride(0), BOX, 1], [1, nb, BOX], layout)
    part = torch.empty(rows * k * 2, dtype=torch.float32, device=x.device)
    ws = _counters(x, rows)
    softmax_gluon_kernel[(n,)](desc(x), desc(y), part, ws, rows, cols, n, **constexprs(cfg, cols),
                               num_warps=cfg.num_warps)


# -- offline compile (no GPU): used by tests/test_softmax_long_rows_gluon.py -----------------------------------

def compile_offline(cfg: Config, dtype_name: str = "float32", cols: int = 131072):
    """Compile the kernel for sm_90a without a GPU (the launch's specialisation for `cols` columns: K, EVEN);
    returns triton's CompiledKernel (asm: ttgir, ptx, cubin)."""
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    isz = {"float32": 4, "bfloat16": 2, "float16": 2}[dtype_name]
    check_config(cfg, isz)
    short = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}[dtype_name]
    d = f"tensordesc<{short}[1, {cfg.CHUNK // BOX}, {BOX}],{_layout(cfg, dtype_name)!r}>"
    runtime = {"x_desc": d, "y_desc": d, "part_ptr": "*fp32", "ws_ptr": "*i32", "rows": "i32", "cols": "i32",
               "n_programs": "i32"}
    kernel = softmax_gluon_kernel
    signature = {name: runtime.get(name, "constexpr") for name in kernel.arg_names}
    src = GluonASTSource(kernel, signature, constexprs(cfg, cols))
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": cfg.num_warps})
