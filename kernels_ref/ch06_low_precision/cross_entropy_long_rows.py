"""Candidates (not registered anywhere: benchmarks/softmax_long_rows_sweep.py decides) for Chapter 6's fused
cross-entropy (loss and gradient, in place or not: cross_entropy_triton.cross_entropy's contract) over long rows,
with the L2-bounded persistent scheme of kernels_ref/ch03_online_softmax/softmax_long_rows.py.

cross_entropy_split.py (the current fast reference past 32768 columns: 84.1% / 83.3% of copy for bfloat16 rows of
131072 / 262144 columns on an H100) launches one program per (row, chunk), so what is between the two reads is
whatever the hardware keeps resident (up to 8 programs of 8 warps an SM). Here a persistent grid of P = SMs x
per_sm programs takes tickets (ticket t = part t % K of row t // K), so at most P parts are in flight, a number the
config sets (softmax_long_rows.in_flight_bytes); K = 1 is the persistent two-pass kernel (whole rows, no wait).

Per part: pass 1 (loads evict_last when hints) keeps a block-scalar online (m, d) with one exp2 per element and,
with label smoothing, the sum of the logits; the part that holds the target column reads x[t] then (a scalar load,
before anything of the row is written: every program of the row writes only after the row's wait, so in place is
safe). It publishes (m, d, sum x, x[t] or 0), waits for the row's K parts, merges them into lse and, for k = 0, the
loss; pass 2 (evict_first loads and stores) writes the gradient p (1 + 2 w lse) - eps / V - (1 - eps) [j = t].
The exponentials are exp2 of (x - m) log2 e (the difference first, in natural units). A row whose target is -100
gets loss 0 and a zero gradient without its logits being read (no part of it publishes or waits).

Co-residency and counters as in softmax_long_rows.py (which provides the counters: one int32 workspace per device and
stream, zero between calls). Triton's interpreter: K = 1 runs as on the GPU; K > 1 only with phases=True (two
launches: pass 1 and publish; then merge and pass 2). NOT RUN ON A GPU YET."""
import torch
import triton
import triton.language as tl

from kernels_ref.ch03_online_softmax import softmax_long_rows as lr


@triton.jit
def _stats(x_row, lo, hi, BLOCK: tl.constexpr, HINTS: tl.constexpr, SMOOTH: tl.constexpr):
    """(m, d, sum x) of x_row[lo:hi]: block-scalar online, one exp2 per element."""
    m = -float("inf")
    d = 0.0
    sx = 0.0
    for start in range(lo, hi, BLOCK):
        c = start + tl.arange(0, BLOCK)
        mask = c < hi
        if HINTS:
            x = tl.load(x_row + c, mask=mask, other=-float("inf"), eviction_policy="evict_last").to(tl.float32)
        else:
            x = tl.load(x_row + c, mask=mask, other=-float("inf")).to(tl.float32)
        if SMOOTH:
            sx += tl.sum(tl.where(mask, x, 0.0), axis=0)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        base = tl.where(m_new == -float("inf"), 0.0, m_new)
        d = d * tl.exp2((m - base) * 1.4426950408889634) + tl.sum(tl.exp2((x - base) * 1.4426950408889634), axis=0)
        m = m_new
    return m, d, sx


@triton.jit
def _grad(x_row, g_row, lo, hi, t, lse, grow, eps_v, one_eps, BLOCK: tl.constexpr, HINTS: tl.constexpr):
    for start in range(lo, hi, BLOCK):
        c = start + tl.arange(0, BLOCK)
        mask = c < hi
        if HINTS:
            x = tl.load(x_row + c, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        else:
            x = tl.load(x_row + c, mask=mask, other=0.0).to(tl.float32)
        g = tl.exp2((x - lse) * 1.4426950408889634) * grow - eps_v
        g = tl.where(c == t, g - one_eps, g)
        if HINTS:
            tl.store(g_row + c, g.to(g_row.dtype.element_ty), mask=mask, eviction_policy="evict_first")
        else:
            tl.store(g_row + c, g.to(g_row.dtype.element_ty), mask=mask)


@triton.jit
def ce_long_rows_kernel(x_ptr, t_ptr, loss_ptr, dx_ptr, part_ptr, ws_ptr, rows, cols, part_cols, n_programs,
                        z_weight, smoothing, K: tl.constexpr, KP: tl.constexpr, BLOCK: tl.constexpr,
                        HINTS: tl.constexpr, SMOOTH: tl.constexpr, PHASE: tl.constexpr = 0):
    tickets = rows * K
    t = tl.atomic_add(ws_ptr, 1)
    while t < tickets:
        row = t // K
        k = t - row * K
        lo = k * part_cols
        hi = tl.minimum(lo + part_cols, cols)  # a part past the row's end: lo >= hi, (m, d) = (-inf, 0)
        x_row = x_ptr + row.to(tl.int64) * cols
        g_row = dx_ptr + row.to(tl.int64) * cols
        tgt = tl.load(t_ptr + row).to(tl.int32)
        if tgt == -100:  # ignored: no loss, no gradient, logits not read; no part of this row waits
            if PHASE != 1:
                for start in range(lo, hi, BLOCK):
                    c = start + tl.arange(0, BLOCK)
                    tl.store(g_row + c, tl.zeros([BLOCK], tl.float32).to(dx_ptr.dtype.element_ty), mask=c < hi)
                if k == 0:
                    tl.store(loss_ptr + row, 0.0)
        else:
            eps_v = smoothing / cols
            if K == 1:
                m, d, sx = _stats(x_row, 0, cols, BLOCK, HINTS, SMOOTH)
                xt = tl.load(x_row + tgt).to(tl.float32)  # before pass 2 (in place, it overwrites x[t])
                lse = m + tl.log(d)
                tl.store(loss_ptr + row, lse - (1.0 - smoothing) * xt - eps_v * sx + z_weight * lse * lse)
                _grad(x_row, g_row, 0, cols, tgt, lse, 1.0 + 2.0 * z_weight * lse, eps_v, 1.0 - smoothing, BLOCK,
                      HINTS)
            else:
                cnt = ws_ptr + 2 + row
                if PHASE != 2:
                    m, d, sx = _stats(x_row, lo, hi, BLOCK, HINTS, SMOOTH)
                    mine = (tgt >= lo) & (tgt < hi)
                    xt = tl.load(x_row + tgt, mask=mine, other=0.0).to(tl.float32)  # before the row's wait
                    p = part_ptr + 4 * t
                    tl.store(p, m)
                    tl.store(p + 1, d)
                    tl.store(p + 2, sx)
                    tl.store(p + 3, xt)
                    tl.debug_barrier()
                    tl.atomic_add(cnt, 1, sem="release")
                if PHASE != 1:
                    n = tl.load(cnt, volatile=True)
                    while n < K:
                        n = tl.load(cnt, volatile=True)
                    tl.atomic_add(cnt, 0, sem="acquire")
                    tl.debug_barrier()
                    kk = tl.arange(0, KP)
                    q = part_ptr + 4 * (row * K + kk)
                    ms = tl.load(q, mask=kk < K, other=-float("inf"), volatile=True)
                    ds = tl.load(q + 1, mask=kk < K, other=0.0, volatile=True)
                    big_m = tl.max(ms, axis=0)
                    mb = tl.where(big_m == -float("inf"), 0.0, big_m)
                    big_d = tl.sum(tl.where(ms == -float("inf"), 0.0,
                                            ds * tl.exp2((ms - mb) * 1.4426950408889634)), axis=0)
                    lse = big_m + tl.log(big_d)
                    if k == 0:
                        sxs = tl.sum(tl.load(q + 2, mask=kk < K, other=0.0, volatile=True), axis=0)
                        xts = tl.sum(tl.load(q + 3, mask=kk < K, other=0.0, volatile=True), axis=0)
                        tl.store(loss_ptr + row, lse - (1.0 - smoothing) * xts - eps_v * sxs + z_weight * lse * lse)
                    _grad(x_row, g_row, lo, hi, tgt, lse, 1.0 + 2.0 * z_weight * lse, eps_v, 1.0 - smoothing,
                          BLOCK, HINTS)
                    left = tl.atomic_add(cnt, 1)
                    tl.atomic_xchg(cnt, 0, mask=left == 2 * K - 1)
        t = tl.atomic_add(ws_ptr, 1)
    done = tl.atomic_add(ws_ptr + 1, 1, sem="acq_rel")
    tl.atomic_xchg(ws_ptr, 0, mask=done == n_programs - 1)
    tl.atomic_xchg(ws_ptr + 1, 0, mask=done == n_programs - 1)


def cross_entropy_long_rows(logits, target, loss, dlogits, z_weight=1e-4, smoothing=0.0, block=8192, warps=8,
                            per_sm=1, programs=None, hints=True, k=1, phases=False):
    """As cross_entropy_triton.cross_entropy (logits and dlogits contiguous, dlogits may be logits), on a persistent
    grid (programs, default SMs x per_sm; 0 = one per ticket) with each row cut into k parts of whole BLOCKs."""
    rows, cols = logits.shape
    assert logits.is_contiguous() and dlogits.is_contiguous()
    if rows == 0:
        return
    block = min(block, triton.next_power_of_2(cols))
    part_cols = triton.cdiv(triton.cdiv(cols, k), block) * block
    work = rows * k
    if programs is None:
        programs = lr._sm_count(logits) * per_sm
    programs = max(1, min(programs or work, work))
    if k > 1 and not phases:
        if not lr._waits_allowed(logits):
            raise ValueError("cross_entropy_long_rows: k > 1 waits between programs: GPU only (phases=True elsewhere)")
        if k > lr._sm_count(logits) or programs < k:
            raise ValueError(f"cross_entropy_long_rows: k = {k} parts cannot all be resident ({programs} programs)")
    part = torch.empty(max(work * 4, 1), dtype=torch.float32, device=logits.device)
    ws = lr._counters(logits, rows)
    for phase in ((1, 2) if phases and k > 1 else (0,)):
        ce_long_rows_kernel[(programs,)](logits, target, loss, dlogits, part, ws, rows, cols, part_cols, programs,
                                         z_weight, smoothing, K=k, KP=triton.next_power_of_2(k), BLOCK=block,
                                         HINTS=hints, SMOOTH=smoothing != 0, PHASE=phase, num_warps=warps)


def run_config(logits, target, loss, dlogits, z_weight=1e-4, smoothing=0.0, cfg=None):
    """One config dict: {"kernel": "ce_long_rows", "k", "block", "warps", "per_sm" or "programs", "hints"}."""
    cross_entropy_long_rows(logits, target, loss, dlogits, z_weight, smoothing, block=cfg["block"],
                            warps=cfg["warps"], per_sm=cfg.get("per_sm", 1), programs=cfg.get("programs"),
                            hints=cfg.get("hints", True), k=cfg.get("k", 1))


def _c(k, block, warps, per_sm=1, programs=None, hints=True):
    cfg = {"kernel": "ce_long_rows", "k": k, "block": block, "warps": warps, "per_sm": per_sm, "hints": hints}
    if programs is not None:
        cfg["programs"] = programs
    return cfg


# The sweep's candidates per (rows, cols), most promising first (bfloat16; in flight = programs x part bytes).
# cross_entropy_split's best on an H100: CHUNK 32768, BLOCK 8192, 8 warps, one program per chunk (84.1% / 83.3%).
SWEEP = {
    (2048, 131072): [_c(4, 8192, 8, 2), _c(4, 8192, 8, 3), _c(1, 16384, 16, 1), _c(2, 8192, 8, 2),
                     _c(4, 8192, 8, 4), _c(1, 8192, 8, 1)],
    (1024, 262144): [_c(8, 8192, 8, 2), _c(8, 8192, 8, 3), _c(4, 8192, 8, 2), _c(8, 8192, 8, 4),
                     _c(4, 16384, 16, 1)],
}
