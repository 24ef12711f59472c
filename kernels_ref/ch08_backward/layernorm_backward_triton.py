"""Reference: LayerNorm backward in Triton (Chapter 8, exercise 3).

Forward: y = x̂ * gamma + beta, x̂ = (x - mean) * rstd, rstd = 1 / sqrt(var + eps) (biased variance).
Backward, per row (g = gamma * dy):
    dx = rstd * (g - mean(g) - x̂ * mean(g * x̂))               (two row reductions, after mean and variance)
and across rows dgamma = sum of dy * x̂, dbeta = sum of dy.

The same two stages as RMSNorm's backward: a fixed grid of P programs loops over rows p, p + P, ...
(mean and rstd recomputed from the row in registers), keeps fp32 shares of dgamma and dbeta, and stores them
once; a second kernel adds the P partial rows of both in a fixed order (deterministic: no atomics).
Bytes: read x and dy, write dx, plus 2 * 2 * P * cols * 4 B of partial sums. P and the warps: RMSNorm's
(benchmarks/evidence/ch08_norm_backward_sweep_h200_2026-12-02.json)."""
import torch
import triton
import triton.language as tl

# %% notebook
@triton.jit
def layernorm_backward_kernel(x_ptr, g_ptr, dy_ptr, dx_ptr, pg_ptr, pb_ptr, rows, cols, eps,
                              BLOCK: tl.constexpr):
    """Program p: rows p, p + P, ...; its shares of dgamma and dbeta go to pg[p, :cols] and pb[p, :cols]."""
    ### BEGIN SOLUTION
    pid = tl.program_id(0)
    step = tl.num_programs(0)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    g = tl.load(g_ptr + c, mask=mask, other=0.0).to(tl.float32)
    dg = tl.zeros([BLOCK], dtype=tl.float32)
    db = tl.zeros([BLOCK], dtype=tl.float32)
    for row in range(pid, rows, step):
        off = tl.cast(row, tl.int64) * cols + c
        x = tl.load(x_ptr + off, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + off, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, 0) / cols
        xc = tl.where(mask, x - mean, 0.0)  # masked lanes must not add (0 - mean)²
        rstd = tl.rsqrt(tl.sum(xc * xc, 0) / cols + eps)
        xhat = xc * rstd
        gdy = g * dy  # 0 on masked lanes (both loaded as 0)
        c1 = tl.sum(gdy, 0) / cols
        c2 = tl.sum(gdy * xhat, 0) / cols
        tl.store(dx_ptr + off, (rstd * (gdy - c1 - xhat * c2)).to(dx_ptr.dtype.element_ty), mask=mask)
        dg += dy * xhat
        db += dy
    tl.store(pg_ptr + pid.to(tl.int64) * cols + c, dg, mask=mask)
    tl.store(pb_ptr + pid.to(tl.int64) * cols + c, db, mask=mask)
    ### END SOLUTION


@triton.jit
def layernorm_column_sums_kernel(pg_ptr, pb_ptr, dg_ptr, db_ptr, parts, cols,
                                 BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """dgamma[c] = sum over p of pg[p, c] and dbeta[c] = sum of pb[p, c], in a fixed order."""
    ### BEGIN SOLUTION
    c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    r = tl.arange(0, BLOCK_R)
    acc_g = tl.zeros([BLOCK_C], dtype=tl.float32)
    acc_b = tl.zeros([BLOCK_C], dtype=tl.float32)
    for start in range(0, parts, BLOCK_R):
        m = ((start + r)[:, None] < parts) & (c[None, :] < cols)
        off = (start + r)[:, None].to(tl.int64) * cols + c[None, :]
        acc_g += tl.sum(tl.load(pg_ptr + off, mask=m, other=0.0), 0)
        acc_b += tl.sum(tl.load(pb_ptr + off, mask=m, other=0.0), 0)
    tl.store(dg_ptr + c, acc_g.to(dg_ptr.dtype.element_ty), mask=c < cols)
    tl.store(db_ptr + c, acc_b.to(db_ptr.dtype.element_ty), mask=c < cols)
    ### END SOLUTION


def layernorm_backward(x, gamma, dy, dx, dgamma, dbeta, eps):
    """dx, dgamma and dbeta of y = (x - mean) / sqrt(var + eps) * gamma + beta, given dy; x, dy, dx
    (rows, cols) contiguous, gamma, dgamma, dbeta (cols,)."""
    ### BEGIN SOLUTION
    rows, cols = x.shape
    BLOCK = triton.next_power_of_2(cols)
    # programs per SM and warps from a sweep on an H200: the wider the row (all of it in registers), the fewer
    # programs fit on an SM: 8 at 1024 columns, 2 at 4096, 1 at 8192
    per_sm = min(8, max(1, 8192 // BLOCK))
    warps = 4 if BLOCK <= 4096 else (8 if BLOCK <= 8192 else 16)
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 4
    parts = min(rows, per_sm * sms)  # each program loops over its rows
    pg = torch.empty((parts, cols), device=x.device, dtype=torch.float32)
    pb = torch.empty_like(pg)
    layernorm_backward_kernel[(parts,)](x, gamma, dy, dx, pg, pb, rows, cols, eps, BLOCK=BLOCK, num_warps=warps)
    BLOCK_C = 32
    layernorm_column_sums_kernel[(triton.cdiv(cols, BLOCK_C),)](pg, pb, dgamma, dbeta, parts, cols,
                                                                BLOCK_R=64, BLOCK_C=BLOCK_C, num_warps=4)
    ### END SOLUTION
