"""Chapter 3's softmax over long rows (131072 columns and more): two passes over x, the second from L2, with the rows
(or parts of rows) in flight bounded so that L2 can keep them between the passes. The K > 1 path of
long_rows_kernel (parts of 32768 columns, BLOCK 8192, 8 warps, 3 programs an SM) is the float16/bfloat16 reference
past 32768 columns (softmax_split_rows.CONFIGS; chosen on four H100 runs, listed there). The rest (K = 1,
chunks_kernel, the options) are candidates that benchmarks/softmax_long_rows_sweep.py times.

Why. softmax_split_rows.py's two_pass_kernel gives each row to one program and launches one program per row: an
H100 keeps 8 of those programs per SM (8 warps each), so about 1000 rows of 256-512 KiB are between their two
reads at once, far more than the 50 MiB L2; pass 2 reads most of x from memory again (65-67% of copy measured at
131072 columns). Its split_rows_kernel reads x once but holds a 16384-column chunk in registers while it waits
for the row's other chunks (88.0% float32, 73.4% bfloat16, in a report of 2026-11-26, archived run
gpu_2026-11-26_s7). Here:

    (a) K = 1, persistent: a grid of P programs (CONFIG "per_sm": P = SMs x per_sm) takes rows one after another
        from an atomic ticket counter (a program that starts late, because fewer than P fit at once, just takes
        fewer rows: no static share to finish alone at the end), so at most P rows are in flight: P x row
        bytes = 132 x 256 KiB = 33 MiB for bfloat16 131072 with per_sm 1. Pass 1: BLOCK columns at a time, a
        block-scalar online (m, d) with one exp2 per element (the block's max, then d = d 2^(m - m') +
        sum 2^(x - m'), in log2 e units after the difference is taken), loads hinted evict_last; pass 2 reads
        the row again (evict_first) and writes y = 2^(x - m) / d (stores evict_first: y is not read back, and
        should not push x out of L2).
    (b) K > 1: each row cut into K parts of PART columns (a multiple of BLOCK); each part is a ticket. A program
        does pass 1 over its part, publishes the part's (m, d), waits until the row's K parts are published,
        merges them into the row's (M, D) and does pass 2 over its part. What is in flight between the two reads
        is P x PART columns (float32 131072, K = 4, P = 2 x 132: 33 MiB), and nothing is held in registers
        across the wait (a waiting program is a few scalars: programs of other rows keep the SM streaming).

Registers (ptxas -v for sm_90a on the PTX Triton 3.7.1 emits here, without a GPU; pointers and strides as multiples
of 16; the GPU's Triton 3.6.0 may differ): K = 1 BLOCK 8192, 8 warps: 80 float32 (3 programs an SM fit), 57 bfloat16
(4); BLOCK 16384, 16 warps: 123 float32 (1 an SM: per_sm 2 leaves half the grid waiting to start, harmless with
tickets), 64 bfloat16 (8 bytes spilled; 2 an SM); BLOCK 32768, 32 warps: 64 (1 an SM). K > 1: float32 BLOCK 8192,
8 warps: 64 (4 bytes spilled); BLOCK 4096, 4 warps: 64; bfloat16 BLOCK 16384, 16 warps: 64. STAGES 2 adds
shared memory for cp.async buffers (32 KiB at bfloat16 BLOCK 16384).

Options, per call (CONFIG dicts in the sweep): block, warps, per_sm (or programs: the grid itself; 0 = one program
per ticket, not persistent), hints (the evict_last / evict_first policies on or off), reverse (pass 2 walks its
columns from the end back, so it first reads what pass 1 read last: what an LRU-like cache is likeliest to still
hold), stages (software pipelining of pass 1's loop, tl.range num_stages), K.

Co-residency (K > 1), as softmax_split_rows.py's docstring argues: programs do not take the part their block index
names; each takes a ticket from an atomic counter when it is running (ticket t = part t % K of row t // K), so when
a program waits on row r every earlier ticket is held by a running program, all earlier rows finish, and the
chain can stall only if K exceeds the programs resident at once. Every SM holds at least one program of a kernel
that launches, so K <= the SM count is enough (checked). Assumes the GPU is this kernel's while it runs.

Counters (K > 1), as in softmax_split_rows.py: ws (int32, cached per device and stream, zero between calls): ws[0]
the ticket counter, ws[1] an exit counter, ws[2 + row] one per row. Each program of a row adds 1 after publishing
(release) and 1 after reading the partials; the one whose second add returns 2K - 1 resets the row's counter. The
grid's last program to find no ticket resets ws[0] and ws[1]. The partials (rows x K x (m, d) float32) are written
before they are read in every call.

Edge cases: a part (or a whole block) of -inf keeps m = -inf, and its exponentials use 0 as the base (no
(-inf) - (-inf)), so its d = 0 and it drops out of the merge; a row that is all -inf gives NaN, as torch.softmax.

Triton's interpreter runs programs one after another, so a wait never ends there: K = 1 runs as on the GPU; K > 1
runs with phases=True (PHASE 1: pass 1 and publish, every ticket; PHASE 2, a second launch: the wait, already
satisfied, the merge and pass 2), which checks the tickets, parts, merge and counters on a CPU. PHASE 0 (the GPU
path) is the fused one; it ran on H100s (the sweeps' JSON in archived runs gpu_2026-11-26_s8 and gpu_2026-11-26_s9,
outputs checked against torch.softmax before timing; tests/test_softmax_long_rows.py and test_softmax_split_rows.py
on a GPU)."""
import os

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def _pass1(x_row, lo, hi, BLOCK: tl.constexpr, HINTS: tl.constexpr, STAGES: tl.constexpr):
    """(m, d) of x_row[lo:hi]: block-scalar online, one exp2 per element; m = -inf and d = 0 if nothing is finite."""
    m = -float("inf")
    d = 0.0
    for start in tl.range(lo, hi, BLOCK, num_stages=STAGES):
        c = start + tl.arange(0, BLOCK)
        if HINTS:
            x = tl.load(x_row + c, mask=c < hi, other=-float("inf"), eviction_policy="evict_last").to(tl.float32)
        else:
            x = tl.load(x_row + c, mask=c < hi, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        base = tl.where(m_new == -float("inf"), 0.0, m_new)  # nothing finite yet: no (-inf) - (-inf)
        d = d * tl.exp2((m - base) * 1.4426950408889634) + tl.sum(tl.exp2((x - base) * 1.4426950408889634), axis=0)
        m = m_new
    return m, d


@triton.jit
def _pass2(x_row, y_row, lo, hi, m, inv, BLOCK: tl.constexpr, HINTS: tl.constexpr, REVERSE: tl.constexpr):
    """y_row[lo:hi] = 2^((x - m) log2 e) * inv, reading x again (from L2, if it stayed there)."""
    base = tl.where(m == -float("inf"), 0.0, m)
    nb = tl.cdiv(hi - lo, BLOCK)
    for i in range(0, nb):
        if REVERSE:
            start = lo + (nb - 1 - i) * BLOCK
        else:
            start = lo + i * BLOCK
        c = start + tl.arange(0, BLOCK)
        mask = c < hi
        if HINTS:
            x = tl.load(x_row + c, mask=mask, other=-float("inf"), eviction_policy="evict_first").to(tl.float32)
            y = tl.exp2((x - base) * 1.4426950408889634) * inv
            tl.store(y_row + c, y.to(y_row.dtype.element_ty), mask=mask, eviction_policy="evict_first")
        else:
            x = tl.load(x_row + c, mask=mask, other=-float("inf")).to(tl.float32)
            y = tl.exp2((x - base) * 1.4426950408889634) * inv
            tl.store(y_row + c, y.to(y_row.dtype.element_ty), mask=mask)


@triton.jit
def publish(part_ptr, t, cnt, m, d):
    """Store ticket t's partial (m, d), then count it into the row's counter: release, so a program that sees the
    count (acquire) sees the partial too."""
    tl.store(part_ptr + 2 * t, m)
    tl.store(part_ptr + 2 * t + 1, d)
    tl.debug_barrier()
    tl.atomic_add(cnt, 1, sem="release")


@triton.jit
def wait_partials(part_ptr, cnt, row, K: tl.constexpr, KP: tl.constexpr):
    """Wait until the row's K partials are counted, then load them: (m, d) per part, (-inf, 0) past K. The row's
    other parts hold earlier tickets or are taken next, by running programs (the co-residency argument above)."""
    n = tl.load(cnt, volatile=True)
    while n < K:
        n = tl.load(cnt, volatile=True)
    # The acquire: the K partials are seen after it. Its result must be used, or Triton drops the atomic (an unused
    # atomic_add compiles to no instruction at all: no acquire in the PTX, only the volatile loads' order). n >= K
    # here, so the masks below are kk < K; they depend on n so the atomic stays.
    n = tl.minimum(tl.atomic_add(cnt, 0, sem="acquire"), K)
    tl.debug_barrier()
    kk = tl.arange(0, KP)
    q = part_ptr + 2 * (row * K + kk)
    ms = tl.load(q, mask=kk < n, other=-float("inf"), volatile=True)
    ds = tl.load(q + 1, mask=kk < n, other=0.0, volatile=True)
    return ms, ds


@triton.jit
def long_rows_kernel(x_ptr, y_ptr, part_ptr, ws_ptr, rows, cols, part_cols, x_row_stride, y_row_stride, n_programs,
                     K: tl.constexpr, KP: tl.constexpr, BLOCK: tl.constexpr, HINTS: tl.constexpr,
                     REVERSE: tl.constexpr, STAGES: tl.constexpr, PHASE: tl.constexpr = 0):
    """Persistent: each program takes tickets (ws[0]) until none is left. K = 1: ticket t is row t, both passes.
    K > 1: ticket t is part t % K (part_cols columns) of row t // K; pass 1, publish, wait for the row, merge,
    pass 2."""
    tickets = rows * K
    t = tl.atomic_add(ws_ptr, 1)
    while t < tickets:
        row = t // K
        x_row = x_ptr + row.to(tl.int64) * x_row_stride
        y_row = y_ptr + row.to(tl.int64) * y_row_stride
        if K == 1:  # the whole row, both passes, no wait
            m, d = _pass1(x_row, 0, cols, BLOCK, HINTS, STAGES)
            _pass2(x_row, y_row, 0, cols, m, 1.0 / d, BLOCK, HINTS, REVERSE)  # all -inf: d = 0, NaN as torch
        else:
            k = t - row * K
            lo = k * part_cols
            hi = tl.minimum(lo + part_cols, cols)  # a part past the row's end: lo >= hi, no block, (m, d) = (-inf, 0)
            cnt = ws_ptr + 2 + row
            if PHASE != 2:  # pass 1, publish the part's (m, d), then count it (release: the partial first)
                m, d = _pass1(x_row, lo, hi, BLOCK, HINTS, STAGES)
                publish(part_ptr, t, cnt, m, d)
            if PHASE != 1:
                ms, ds = wait_partials(part_ptr, cnt, row, K, KP)
                big_m = tl.max(ms, axis=0)
                mb = tl.where(big_m == -float("inf"), 0.0, big_m)
                big_d = tl.sum(tl.where(ms == -float("inf"), 0.0, ds * tl.exp2((ms - mb) * 1.4426950408889634)),
                               axis=0)
                _pass2(x_row, y_row, lo, hi, big_m, 1.0 / big_d, BLOCK, HINTS, REVERSE)
                left = tl.atomic_add(cnt, 1)  # second add: past the wait; the row's last one resets its counter
                tl.atomic_xchg(cnt, 0, mask=left == 2 * K - 1)
        t = tl.atomic_add(ws_ptr, 1)
    done = tl.atomic_add(ws_ptr + 1, 1, sem="acq_rel")  # after this program's last ticket add
    tl.atomic_xchg(ws_ptr, 0, mask=done == n_programs - 1)  # the grid's last program: counters back to 0
    tl.atomic_xchg(ws_ptr + 1, 0, mask=done == n_programs - 1)


@triton.jit
def chunks_kernel(x_ptr, y_ptr, part_ptr, ws_ptr, rows, cols, x_row_stride, y_row_stride,
                  K: tl.constexpr, KP: tl.constexpr, CHUNK: tl.constexpr, BLOCK: tl.constexpr,
                  HINTS: tl.constexpr, PHASE: tl.constexpr = 0, FRESH: tl.constexpr = False,
                  PRESCALE: tl.constexpr = False):
    """(c) cross_entropy_split.py's shape for softmax: a grid of rows x K programs, each takes ONE ticket when it
    starts (ticket t = chunk t % K of row t // K), so no program loops; CHUNK is a compile-time constant (pass
    loops of a known trip count); the difference x - m is taken before the log2 e scaling (scaling x first
    loses float32 bits on large x: 3.4e-6 against 2e-6 on rows shifted by 1000). The program that
    takes the last ticket resets the ticket counter: every other program has taken its ticket by then.
    Two switches test why cross_entropy_split looked faster than this kernel on bf16 131072 (its "88%" counted the
    bytes of ignored rows; with every row targeted, 82.7-83.6%, archived run gpu_2026-11-26_s9/d; this kernel 72-73%):
    FRESH: cross-entropy's counters (a zeroed buffer per call, the ticket counter after the row counters, nothing
    reset); PRESCALE: cross-entropy's arithmetic (x scaled by log2 e once, m and d in base 2)."""
    if FRESH:
        tick = ws_ptr + rows
    else:
        tick = ws_ptr
    t = tl.atomic_add(tick, 1)
    if not FRESH:
        tl.atomic_xchg(tick, 0, mask=t == rows * K - 1)
    row = t // K
    k = t - row * K
    lo = k * CHUNK
    c = tl.arange(0, BLOCK)
    x_row = x_ptr + row.to(tl.int64) * x_row_stride
    y_row = y_ptr + row.to(tl.int64) * y_row_stride
    if FRESH:
        cnt = ws_ptr + row
    else:
        cnt = ws_ptr + 2 + row
    if PHASE != 2:
        m = -float("inf")
        d = 0.0
        for s in range(0, CHUNK, BLOCK):
            idx = lo + s + c
            if HINTS:
                x = tl.load(x_row + idx, mask=idx < cols, other=-float("inf"), eviction_policy="evict_last")
            else:
                x = tl.load(x_row + idx, mask=idx < cols, other=-float("inf"))
            if PRESCALE:
                x = x.to(tl.float32) * 1.4426950408889634
                m_new = tl.maximum(m, tl.max(x, axis=0))
                base = tl.where(m_new == -float("inf"), 0.0, m_new)  # a block of -inf: no (-inf) - (-inf)
                d = d * tl.exp2(m - base) + tl.sum(tl.exp2(x - base), axis=0)
            else:
                x = x.to(tl.float32)
                m_new = tl.maximum(m, tl.max(x, axis=0))
                base = tl.where(m_new == -float("inf"), 0.0, m_new)  # nothing finite yet: no (-inf) - (-inf)
                d = d * tl.exp2((m - base) * 1.4426950408889634) + tl.sum(tl.exp2((x - base) * 1.4426950408889634),
                                                                            axis=0)
            m = m_new
        publish(part_ptr, t, cnt, m, d)
    if PHASE != 1:
        ms, ds = wait_partials(part_ptr, cnt, row, K, KP)
        big_m = tl.max(ms, axis=0)
        mb = tl.where(big_m == -float("inf"), 0.0, big_m)
        if PRESCALE:  # m already in log2 units
            inv = 1.0 / tl.sum(tl.where(ms == -float("inf"), 0.0, ds * tl.exp2(ms - mb)), axis=0)
        else:
            inv = 1.0 / tl.sum(tl.where(ms == -float("inf"), 0.0, ds * tl.exp2((ms - mb) * 1.4426950408889634)),
                               axis=0)  # a row of -inf: 1 / 0, and y = 0 x inf = NaN, as torch.softmax
        for s in range(0, CHUNK, BLOCK):
            idx = lo + s + c
            mask = idx < cols
            if HINTS:
                x = tl.load(x_row + idx, mask=mask, other=-float("inf"), eviction_policy="evict_first")
            else:
                x = tl.load(x_row + idx, mask=mask, other=-float("inf"))
            if PRESCALE:
                y = tl.exp2(x.to(tl.float32) * 1.4426950408889634 - mb) * inv
            else:
                y = tl.exp2((x.to(tl.float32) - mb) * 1.4426950408889634) * inv
            if HINTS:
                tl.store(y_row + idx, y.to(y_row.dtype.element_ty), mask=mask, eviction_policy="evict_first")
            else:
                tl.store(y_row + idx, y.to(y_row.dtype.element_ty), mask=mask)
        if not FRESH:
            left = tl.atomic_add(cnt, 1)  # second add: past the wait; the row's last one resets its counter
            tl.atomic_xchg(cnt, 0, mask=left == 2 * K - 1)


def softmax_chunks(x, y, chunk=32768, block=8192, warps=8, hints=True, phases=False, fresh=False, prescale=False):
    """softmax(x) into y with chunks_kernel: rows x K programs of `chunk` columns (a multiple of `block`)."""
    rows, cols = x.shape
    assert x.stride(1) == 1 and y.stride(1) == 1 and y.shape == x.shape
    if rows == 0 or cols == 0:
        return
    chunk = min(chunk, triton.next_power_of_2(cols))
    block = min(block, chunk)
    k = triton.cdiv(cols, chunk)
    if k > 1 and not phases and not _waits_allowed(x):
        raise ValueError("softmax_chunks: k > 1 waits between programs: GPU only (phases=True elsewhere)")
    if k > 1 and not phases and k > _sm_count(x):
        raise ValueError(f"softmax_chunks: k = {k} chunks of a row exceed the SM count (co-residency)")
    part = torch.empty(rows * k * 2, dtype=torch.float32, device=x.device)
    ws = torch.zeros(rows + 1, dtype=torch.int32, device=x.device) if fresh else _counters(x, rows)
    for phase in ((1, 2) if phases and k > 1 else (0,)):
        if fresh and phase == 2:
            ws[rows] = 0  # the tickets again; the row counters keep phase 1's counts
        chunks_kernel[(rows * k,)](x, y, part, ws, rows, cols, x.stride(0), y.stride(0), K=k,
                                   KP=triton.next_power_of_2(k), CHUNK=chunk, BLOCK=block, HINTS=hints, PHASE=phase,
                                   FRESH=fresh, PRESCALE=prescale, num_warps=warps)


_WORKSPACE: dict = {}  # (device, stream) -> int32 counters, zero between calls (the kernel resets them)


def _counters(x, rows):
    key = (x.device, torch.cuda.current_stream(x.device).cuda_stream if x.is_cuda else 0)
    ws = _WORKSPACE.get(key)
    if ws is None or ws.numel() < rows + 2:
        ws = torch.zeros(max(rows, 1024) + 2, dtype=torch.int32, device=x.device)
        _WORKSPACE[key] = ws
    return ws


def _sm_count(x) -> int:
    return torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 4


def _waits_allowed(x) -> bool:
    return x.is_cuda and os.environ.get("TRITON_INTERPRET") != "1"


def softmax_long_rows(x, y, block=8192, warps=8, per_sm=1, programs=None, hints=True, reverse=False, stages=1, k=1,
                      phases=False):
    """softmax(x) along each row into y (2-D, rows contiguous; float32, float16 or bfloat16 in and out).
    k = 1: a persistent grid of `programs` (default SMs x per_sm) programs, each doing both passes over whole rows.
    k > 1: each row cut into k parts of whole BLOCKs; programs wait for the row's other parts (GPU only, unless
    phases: two launches, for Triton's interpreter). programs = 0: one program per row (k = 1) or per part."""
    rows, cols = x.shape
    assert x.stride(1) == 1 and y.stride(1) == 1 and y.shape == x.shape
    if rows == 0 or cols == 0:
        return
    block = min(block, triton.next_power_of_2(cols))
    part_cols = triton.cdiv(triton.cdiv(cols, k), block) * block
    work = rows * k
    if programs is None:
        programs = _sm_count(x) * per_sm
    programs = max(1, min(programs or work, work))
    common = dict(BLOCK=block, HINTS=hints, REVERSE=reverse, STAGES=stages, num_warps=warps)
    ws = _counters(x, rows)
    if k == 1:
        long_rows_kernel[(programs,)](x, y, ws, ws, rows, cols, cols, x.stride(0), y.stride(0), programs, K=1, KP=1,
                                      **common)
        return
    if not phases:
        if not _waits_allowed(x):
            raise ValueError("softmax_long_rows: k > 1 waits between programs: GPU only (phases=True elsewhere)")
        if k > _sm_count(x):
            raise ValueError(f"softmax_long_rows: k = {k} parts of a row exceed the SM count (co-residency)")
        if programs < k:
            raise ValueError(f"softmax_long_rows: {programs} programs cannot hold the {k} parts of a row at once")
    part = torch.empty(rows * k * 2, dtype=torch.float32, device=x.device)
    for phase in ((1, 2) if phases else (0,)):
        long_rows_kernel[(programs,)](x, y, part, ws, rows, cols, part_cols, x.stride(0), y.stride(0), programs, K=k,
                                      KP=triton.next_power_of_2(k), PHASE=phase, **common)


def run_config(x, y, cfg: dict):
    """softmax(x) into y with one config dict (the sweep's records carry them):
    {"kernel": "long_rows", "k", "block", "warps", "per_sm" or "programs", "hints", "reverse", "stages"}."""
    if cfg.get("kernel") == "chunks":
        softmax_chunks(x, y, chunk=cfg["chunk"], block=cfg["block"], warps=cfg["warps"], hints=cfg.get("hints", True),
                       fresh=cfg.get("fresh", False), prescale=cfg.get("prescale", False))
        return
    if cfg.get("kernel") != "long_rows":
        raise ValueError(f"not a long_rows config: {cfg}")
    softmax_long_rows(x, y, block=cfg["block"], warps=cfg["warps"], per_sm=cfg.get("per_sm", 1),
                      programs=cfg.get("programs"), hints=cfg.get("hints", True), reverse=cfg.get("reverse", False),
                      stages=cfg.get("stages", 1), k=cfg.get("k", 1))


def in_flight_bytes(x, cfg: dict, sms: int) -> int:
    """Bytes between their two reads at once, at most (the quantity to keep under L2): programs x part bytes."""
    rows, cols = x.shape
    if cfg.get("kernel") == "chunks":  # rows x K programs: as many in flight as fit on the SMs (not known here)
        return min(rows * triton.cdiv(cols, cfg["chunk"]), sms * cfg.get("fit", 4)) * min(cfg["chunk"], cols) \
            * x.element_size()
    k = cfg.get("k", 1)
    block = min(cfg["block"], triton.next_power_of_2(cols))
    part_cols = min(cols, triton.cdiv(triton.cdiv(cols, k), block) * block)
    programs = cfg.get("programs")
    programs = sms * cfg.get("per_sm", 1) if programs is None else (programs or rows * k)
    return min(programs, rows * k) * part_cols * x.element_size()
