"""Reference: RMSNorm backward in Triton (Chapter 8, exercise 2).

Forward: y = x * rstd * gamma, rstd = 1 / sqrt(mean(x²) + eps). Backward, per row (x̂ = x * rstd):
    dx = rstd * (gamma*dy - x̂ * mean(gamma*dy * x̂))          (two row reductions: mean(x²), then this one)
and across rows dgamma = sum over rows of dy * x̂.

Stage 1: a fixed grid of P programs; program p takes rows p, p + P, p + 2P, ... (rstd recomputed from x, which
is read anyway), writes their dx and keeps its share of dgamma in an fp32 row of registers, stored once to
partial[p]. Stage 2: one program per block of columns adds the P partial rows in a fixed order. No atomics, so
dgamma is the same bits on every run. Bytes: read x and dy, write dx (3 trips of the element size), plus the
partial sums, 2 * P * cols * 4 B (P a few times the number of SMs: a few percent of the rest at 16 384 rows).
P and the warps per program come from a sweep of both on an H200
(benchmarks/evidence/ch08_norm_backward_sweep_h200_2026-12-02.json)."""
import torch
import triton
import triton.language as tl

# %% notebook
@triton.jit
def rmsnorm_backward_kernel(x_ptr, g_ptr, dy_ptr, dx_ptr, partial_ptr, rows, cols, eps,
                            BLOCK: tl.constexpr):
    """Program p: rows p, p + P, ... (P = the grid's size); its dgamma share goes to partial[p, :cols]."""
    ### BEGIN SOLUTION
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    g = tl.load(g_ptr + c, mask=mask, other=0.0).to(tl.float32)
    dg = tl.zeros([BLOCK], dtype=tl.float32)  # this program's share of dgamma, in fp32
    for row in range(pid, rows, step):
        off = tl.cast(row, tl.int64) * cols + c
        x = tl.load(x_ptr + off, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + off, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.rsqrt(tl.sum(x * x, 0) / cols + eps)  # reduction 1: recomputed, x is read anyway
        xhat = x * rstd
        gdy = g * dy
        c2 = tl.sum(gdy * xhat, 0) / cols  # reduction 2
        tl.store(dx_ptr + off, (rstd * (gdy - xhat * c2)).to(dx_ptr.dtype.element_ty), mask=mask)
        dg += dy * xhat
    tl.store(partial_ptr + pid.to(tl.int64) * cols + c, dg, mask=mask)
    ### END SOLUTION


@triton.jit
def dgamma_sum_kernel(partial_ptr, dg_ptr, parts, cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """dgamma[c] = sum over p of partial[p, c], for this program's BLOCK_C columns, in a fixed order."""
    ### BEGIN SOLUTION
    c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    r = tl.arange(0, BLOCK_R)
    acc = tl.zeros([BLOCK_C], dtype=tl.float32)
    for start in range(0, parts, BLOCK_R):
        m = ((start + r)[:, None] < parts) & (c[None, :] < cols)
        tile = tl.load(partial_ptr + (start + r)[:, None].to(tl.int64) * cols + c[None, :], mask=m, other=0.0)
        acc += tl.sum(tile, 0)
    tl.store(dg_ptr + c, acc.to(dg_ptr.dtype.element_ty), mask=c < cols)
    ### END SOLUTION


def rmsnorm_backward(x, gamma, dy, dx, dgamma, eps):
    """dx and dgamma of y = x / sqrt(mean(x²) + eps) * gamma, given dy; x, dy, dx (rows, cols) contiguous,
    gamma, dgamma (cols,)."""
    ### BEGIN SOLUTION
    rows, cols = x.shape
    BLOCK = triton.next_power_of_2(cols)
    # programs per SM and warps from a sweep on an H200: the wider the row (all of it in registers), the fewer
    # programs fit on an SM: 8 at 1024 columns, 2 at 4096, 1 at 8192
    per_sm = min(8, max(1, 8192 // BLOCK))
    warps = 4 if BLOCK <= 4096 else (8 if BLOCK <= 8192 else 16)
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 4
    parts = min(rows, per_sm * sms)  # each program loops over its rows
    partial = torch.empty((parts, cols), device=x.device, dtype=torch.float32)
    rmsnorm_backward_kernel[(parts,)](x, gamma, dy, dx, partial, rows, cols, eps, BLOCK=BLOCK, num_warps=warps)
    BLOCK_C = 32
    dgamma_sum_kernel[(triton.cdiv(cols, BLOCK_C),)](partial, dgamma, parts, cols, BLOCK_R=64, BLOCK_C=BLOCK_C,
                                                     num_warps=4)
    ### END SOLUTION
