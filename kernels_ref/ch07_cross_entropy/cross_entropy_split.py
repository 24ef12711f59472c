"""Reference, fast path: cross-entropy over long rows (more than 32768 columns) with each row split over programs
(Chapter 7, exercise 1, Section 4). Not a notebook cell: the notebook's solution is the two-pass kernel of
cross_entropy_triton.py, which this file falls back to for shorter rows and in Triton's interpreter.

The two-pass kernel gives each row to one program, so every running program holds a whole row between its two
reads: 132 SMs x 512 KiB (262144 bf16 columns) is more than an H100's 50 MiB L2, and most of pass 2 comes from
memory again. Here K programs share a row, CHUNK columns each: a program reads its chunk (pass 1), publishes its
partial (m, d, sum x), waits for the K - 1 others of its row (a counter per row), merges the K partials into lse
and reads its chunk again (pass 2, now from L2: what is in flight is CHUNK per program, not a row) to write the
gradient. Nothing is held in registers across the wait, so several programs share an SM and one streams while
another waits. The statistics are kept in base 2 (EXP2: x scaled by log2 e once, then each exponential is an
ex2), which matters for bf16, where the exponentials are a large share of the work.

Each program takes a ticket (an atomic counter) when it starts and works on the row and chunk its ticket names,
so the programs of a row are running or about to start whenever one of them waits: no reliance on the order in
which the GPU starts blocks. Triton's interpreter runs programs one after another, so there K must be 1.

Measured (benchmarks/ch06_ce_l2split.py; archived run gpu_2026-11-26_s5, 2026-11-26): on an H100,
bf16, 84% / 83% of copy at 131072 / 262144 columns (two passes, one program per row: 80% / 71%; Liger-Kernel 74% /
65%); float32 at 131072 columns 91% (73%). CHUNK 32768, BLOCK 8192, 8 warps was the best configuration tried;
pipelining pass 1 (num_stages 2-3) was slower."""
import os

import triton
import triton.language as tl

from kernels_ref.ch07_cross_entropy import cross_entropy_triton as two_pass


@triton.jit
def ce_l2split_kernel(x_ptr, t_ptr, loss_ptr, dx_ptr, part_ptr, sync_ptr, rows, cols, z_weight, smoothing,
                      K: tl.constexpr, KP: tl.constexpr, CHUNK: tl.constexpr, BLOCK: tl.constexpr,
                      SMOOTH: tl.constexpr, EXP2: tl.constexpr, STAGES: tl.constexpr = 1):
    # EXP2: the statistics in base 2 (m and lse scaled by log2 e), so each exponential is one FMA + ex2
    tk = tl.atomic_add(sync_ptr + rows, 1)  # ticket: the order in which programs started
    row = tk // K
    k = tk - row * K
    base = row.to(tl.int64) * cols
    lo = k * CHUNK
    c = tl.arange(0, BLOCK)
    t = tl.load(t_ptr + row)
    if t == -100:
        for s in range(0, CHUNK, BLOCK):
            idx = lo + s + c
            tl.store(dx_ptr + base + idx, tl.zeros([BLOCK], tl.float32).to(dx_ptr.dtype.element_ty),
                     mask=(idx < cols) & (s + c < CHUNK))
        if k == 0:
            tl.store(loss_ptr + row, 0.0)
    else:
        m = -float("inf")
        d = 0.0
        sx = 0.0
        for s in tl.range(0, CHUNK, BLOCK, num_stages=STAGES):  # STAGES > 1: the next block's load in flight
            idx = lo + s + c
            mask = (idx < cols) & (s + c < CHUNK)
            x = tl.load(x_ptr + base + idx, mask=mask, other=-float("inf"), eviction_policy="evict_last").to(tl.float32)
            if SMOOTH:
                sx += tl.sum(tl.where(mask, x, 0.0), axis=0)
            if EXP2:
                x = x * 1.4426950408889634
            m_new = tl.maximum(m, tl.max(x, axis=0))
            # a chunk past the row's end keeps m = -inf: guard the rescale against (-inf) - (-inf)
            if EXP2:
                d = d * tl.exp2(tl.where(m_new == m, 0.0, m - m_new)) + tl.sum(tl.exp2(x - m_new), axis=0)
            else:
                d = d * tl.exp(tl.where(m_new == m, 0.0, m - m_new)) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
        xt = tl.load(x_ptr + base + t).to(tl.float32)  # before anyone of the row writes (in place)
        p = part_ptr + (row.to(tl.int64) * K + k) * 3
        tl.store(p, m)
        tl.store(p + 1, d)
        tl.store(p + 2, sx)
        n = tl.atomic_add(sync_ptr + row, 1, sem="release") + 1  # release: the partial before the count
        while n < K:
            n = tl.load(sync_ptr + row, volatile=True)
        tl.atomic_add(sync_ptr + row, 0, sem="acquire")  # acquire: the others' partials are seen after this
        kk = tl.arange(0, KP)
        q = part_ptr + (row.to(tl.int64) * K + kk) * 3
        ms = tl.load(q, mask=kk < K, other=-float("inf"), volatile=True)
        ds = tl.load(q + 1, mask=kk < K, other=0.0, volatile=True)
        M = tl.max(ms, axis=0)
        if EXP2:
            lse = (M + tl.log2(tl.sum(tl.where(ds > 0, ds * tl.exp2(ms - M), 0.0), axis=0))) * 0.6931471805599453
        else:
            lse = M + tl.log(tl.sum(tl.where(ds > 0, ds * tl.exp(ms - M), 0.0), axis=0))
        if k == 0:
            sxs = 0.0
            if SMOOTH:
                sxs = tl.sum(tl.load(q + 2, mask=kk < K, other=0.0, volatile=True), axis=0)
            tl.store(loss_ptr + row, lse - (1.0 - smoothing) * xt - smoothing / cols * sxs + z_weight * lse * lse)
        grow = 1.0 + 2.0 * z_weight * lse
        for s in range(0, CHUNK, BLOCK):
            idx = lo + s + c
            mask = (idx < cols) & (s + c < CHUNK)
            x = tl.load(x_ptr + base + idx, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
            if EXP2:
                g = tl.exp2(x * 1.4426950408889634 - lse * 1.4426950408889634) * grow - smoothing / cols
            else:
                g = tl.exp(x - lse) * grow - smoothing / cols
            g = tl.where(idx == t, g - (1.0 - smoothing), g)
            tl.store(dx_ptr + base + idx, g.to(dx_ptr.dtype.element_ty), mask=mask, eviction_policy="evict_first")


def cross_entropy_split(logits, target, loss, dlogits, z_weight=1e-4, smoothing=0.0, chunk=32768, block=8192,
                        warps=8, exp2=True, stages=1):
    """As cross_entropy_triton.cross_entropy, with each row split into chunks of `chunk` columns."""
    import torch
    rows, cols = logits.shape
    chunk = min(chunk, triton.next_power_of_2(cols))
    block = min(block, chunk)
    k = triton.cdiv(cols, chunk)
    part = torch.empty(rows * k * 3, dtype=torch.float32, device=logits.device)
    sync = torch.zeros(rows + 1, dtype=torch.int32, device=logits.device)
    ce_l2split_kernel[(rows * k,)](logits, target, loss, dlogits, part, sync, rows, cols, z_weight, smoothing,
                                   K=k, KP=triton.next_power_of_2(k), CHUNK=chunk, BLOCK=block,
                                   SMOOTH=smoothing != 0, EXP2=exp2, STAGES=stages, num_warps=warps)


def cross_entropy(logits, target, loss, dlogits, z_weight=1e-4, smoothing=0.0):
    """The fastest reference for each shape: split rows past 32768 columns on a GPU, else the two passes."""
    if logits.shape[1] > 32768 and os.environ.get("TRITON_INTERPRET") != "1":
        cross_entropy_split(logits, target, loss, dlogits, z_weight, smoothing)
    else:
        two_pass.cross_entropy(logits, target, loss, dlogits, z_weight, smoothing)
