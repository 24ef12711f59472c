"""Reference: cross-entropy loss and its gradient over a large vocabulary, with z-loss and label
smoothing, in Triton (Chapter 7, exercise 1).

One program per row, two passes over its logits: the first keeps a running max m and a running sum d of
e^(x - m) (Chapter 3's online softmax, one block of columns at a time) and, with label smoothing, the sum
of the logits; then lse = m + log d. The second pass reads the row again and writes the gradient
p·(1 + 2w·lse) − ε/V − (1 − ε)·[j = target]. A row whose target is -100 gets loss 0 and a zero gradient
without its logits being read. Pass 1 loads with eviction_policy="evict_last", so that L2 keeps the row
for pass 2; pass 2's loads and the gradient's stores are marked evict_first. Measured on an H100, 2026-11-23
(benchmarks/ch06_ce_bench.py, ch06_ce_hints.py; archived run gpu_2026-11-23_s4): on 2048 rows of 131072 bf16 logits
the hints take the same kernel from 68% to 80% of the copy bandwidth; blocks of 16384 columns and 16 warps for rows
up to 32768, 32768 and 32 warps beyond, were the best of the configurations tried; a persistent grid and kernels
that split a row over programs that swap statistics were slower."""
import triton
import triton.language as tl

# %% notebook
@triton.jit
def cross_entropy_kernel(x_ptr, t_ptr, loss_ptr, dx_ptr, cols, z_weight, smoothing,
                         BLOCK: tl.constexpr, SMOOTH: tl.constexpr):
    ### BEGIN SOLUTION
    row = tl.program_id(0)
    base = row.to(tl.int64) * cols
    c = tl.arange(0, BLOCK)
    t = tl.load(t_ptr + row)
    if t == -100:  # ignored: no loss, no gradient, and no need to read the logits
        for start in range(0, cols, BLOCK):
            tl.store(dx_ptr + base + start + c, tl.zeros([BLOCK], tl.float32).to(dx_ptr.dtype.element_ty),
                     mask=start + c < cols)
        tl.store(loss_ptr + row, 0.0)
    else:
        # pass 1: running max m, running sum d of e^(x - m), and the sum of the logits if smoothing
        m = -float("inf")
        d = 0.0
        sx = 0.0
        for start in range(0, cols, BLOCK):
            mask = start + c < cols
            # evict_last: ask L2 to keep the row for pass 2, ahead of data that is read once
            x = tl.load(x_ptr + base + start + c, mask=mask, other=-float("inf"),
                        eviction_policy="evict_last").to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)  # padding: e^(-inf) = 0
            m = m_new
            if SMOOTH:
                sx += tl.sum(tl.where(mask, x, 0.0), axis=0)
        lse = m + tl.log(d)
        xt = tl.load(x_ptr + base + t).to(tl.float32)  # before pass 2: in place, it overwrites x[t]
        loss = lse - (1.0 - smoothing) * xt - smoothing / cols * sx + z_weight * lse * lse
        tl.store(loss_ptr + row, loss)
        # pass 2: the gradient, d loss / d x_j = p_j (1 + 2 w lse) - eps / V - (1 - eps) [j = t]
        grow = 1.0 + 2.0 * z_weight * lse
        for start in range(0, cols, BLOCK):
            mask = start + c < cols
            # evict_first: pass 2 is the row's last read, and the gradient is not read back
            x = tl.load(x_ptr + base + start + c, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
            g = tl.exp(x - lse) * grow - smoothing / cols
            g = tl.where(start + c == t, g - (1.0 - smoothing), g)
            tl.store(dx_ptr + base + start + c, g.to(dx_ptr.dtype.element_ty), mask=mask, eviction_policy="evict_first")
    ### END SOLUTION


def cross_entropy(logits, target, loss, dlogits, z_weight=1e-4, smoothing=0.0):
    """Per row i of logits (rows, V): loss[i] = lse - (1 - ε) x[t] - ε mean(x) + w lse² with
    lse = log Σ_j e^(x_j), t = target[i], ε = smoothing, w = z_weight; dlogits[i] = d loss[i] / d logits[i].
    A row whose target is -100 is ignored: loss 0, gradient 0. logits and dlogits: float32 or bfloat16
    (dlogits may be logits itself: the gradient then overwrites the logits); target int64; loss float32."""
    ### BEGIN SOLUTION
    rows, cols = logits.shape
    BLOCK = min(triton.next_power_of_2(cols), 16384 if cols <= 32768 else 32768)
    warps = 32 if BLOCK == 32768 else min(16, max(1, BLOCK // 512))
    cross_entropy_kernel[(rows,)](logits, target, loss, dlogits, cols, z_weight, smoothing,
                                  BLOCK=BLOCK, SMOOTH=smoothing != 0, num_warps=warps)
    ### END SOLUTION

