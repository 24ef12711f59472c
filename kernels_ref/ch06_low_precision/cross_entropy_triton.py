"""Reference: cross-entropy loss and its gradient over a large vocabulary, with z-loss and label
smoothing, in Triton (Chapter 6, exercise 4).

Each program takes rows one after another (a persistent grid of a few programs per SM). Per row, two
passes over the logits: the first keeps a running max m and a running sum d of e^(x - m) (Chapter 3's
online softmax, one block of columns at a time) and the sum of the logits; then lse = m + log d. The
second pass reads the row again, which still sits in L2 if the rows in flight fit there, and writes the
gradient p·(1 + 2w·lse) − ε/V − (1 − ε)·[j = target]. A row whose target is -100 gets loss 0 and a zero
gradient without its logits being read."""
import triton
import triton.language as tl

# %% notebook
@triton.jit
def cross_entropy_kernel(x_ptr, t_ptr, loss_ptr, dx_ptr, rows, cols, z_weight, smoothing,
                         BLOCK: tl.constexpr):
    ### BEGIN SOLUTION
    c = tl.arange(0, BLOCK)
    for row in range(tl.program_id(0), rows, tl.num_programs(0)):
        base = tl.cast(row, tl.int64) * cols
        t = tl.load(t_ptr + row)
        if t == -100:  # ignored: no loss, no gradient, and no need to read the logits
            for start in range(0, cols, BLOCK):
                tl.store(dx_ptr + base + start + c, tl.zeros([BLOCK], tl.float32).to(dx_ptr.dtype.element_ty),
                         mask=start + c < cols)
            tl.store(loss_ptr + row, 0.0)
        else:
            # pass 1: running max m, running sum d of e^(x - m), sum of the logits (for label smoothing)
            m = -float("inf")
            d = 0.0
            sx = 0.0
            for start in range(0, cols, BLOCK):
                mask = start + c < cols
                x = tl.load(x_ptr + base + start + c, mask=mask, other=-float("inf")).to(tl.float32)
                m_new = tl.maximum(m, tl.max(x, axis=0))
                d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)  # padding: e^(-inf) = 0
                m = m_new
                sx += tl.sum(tl.where(mask, x, 0.0), axis=0)
            lse = m + tl.log(d)
            xt = tl.load(x_ptr + base + t).to(tl.float32)
            loss = lse - (1.0 - smoothing) * xt - smoothing / cols * sx + z_weight * lse * lse
            tl.store(loss_ptr + row, loss)
            # pass 2: the gradient, d loss / d x_j = p_j (1 + 2 w lse) - eps / V - (1 - eps) [j = t]
            grow = 1.0 + 2.0 * z_weight * lse
            for start in range(0, cols, BLOCK):
                mask = start + c < cols
                x = tl.load(x_ptr + base + start + c, mask=mask, other=0.0).to(tl.float32)
                g = tl.exp(x - lse) * grow - smoothing / cols
                g = tl.where(start + c == t, g - (1.0 - smoothing), g)
                tl.store(dx_ptr + base + start + c, g.to(dx_ptr.dtype.element_ty), mask=mask)
    ### END SOLUTION


def cross_entropy(logits, target, loss, dlogits, z_weight=1e-4, smoothing=0.0):
    """Per row i of logits (rows, V): loss[i] = lse - (1 - ε) x[t] - ε mean(x) + w lse² with
    lse = log Σ_j e^(x_j), t = target[i], ε = smoothing, w = z_weight; dlogits[i] = d loss[i] / d logits[i].
    A row whose target is -100 is ignored: loss 0, gradient 0. logits and dlogits: float32 or bfloat16
    (dlogits may be logits itself: the gradient then overwrites the logits); target int64; loss float32."""
    ### BEGIN SOLUTION
    import torch
    rows, cols = logits.shape
    BLOCK = min(triton.next_power_of_2(cols), 8192)
    programs = rows
    if logits.is_cuda:  # a few rows per SM at a time: the rows in flight stay in L2 for the second pass
        programs = min(rows, 2 * torch.cuda.get_device_properties(logits.device).multi_processor_count)
    cross_entropy_kernel[(programs,)](logits, target, loss, dlogits, rows, cols, z_weight, smoothing,
                                      BLOCK=BLOCK, num_warps=16 if BLOCK >= 4096 else 4)
    ### END SOLUTION
