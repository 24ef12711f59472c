"""Reference: LayerNorm in Triton (Chapter 5, exercise 2b): one program per row, the row in
registers, mean then squared deviations (two passes over registers, not over memory), fp32
inside, the output rounded once. gamma and beta are loaded before the two sums, so that their loads
overlap the reductions (on an H100, 32768 x 4096 bf16: 99.6-99.7% of copy against 98.9% with the loads
after the sums; archived run gpu_2026-11-26_s9/a/liger_gap_sweep.json)."""
import triton
import triton.language as tl

# %% notebook
@triton.jit
def layernorm_kernel(x_ptr, g_ptr, b_ptr, y_ptr, cols, x_stride, y_stride, eps, BLOCK: tl.constexpr):
    ### BEGIN SOLUTION
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    x = tl.load(x_ptr + row * x_stride + c, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(g_ptr + c, mask=mask, other=0.0).to(tl.float32)  # issued now: they arrive during the sums
    b = tl.load(b_ptr + c, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, 0) / cols
    d = tl.where(mask, x - mean, 0.0)  # masked lanes must not add (0 - mean)²
    rstd = tl.rsqrt(tl.sum(d * d, 0) / cols + eps)
    tl.store(y_ptr + row * y_stride + c, (d * rstd * g + b).to(y_ptr.dtype.element_ty), mask=mask)
    ### END SOLUTION


def layernorm_triton(x, gamma, beta, y, eps):
    """y = (x - mean) / sqrt(var + eps) * gamma + beta along each row; x, y (rows, cols)."""
    ### BEGIN SOLUTION
    rows, cols = x.shape
    BLOCK = triton.next_power_of_2(cols)
    warps = min(16, max(1, BLOCK // 512))
    layernorm_kernel[(rows,)](x, gamma, beta, y, cols, x.stride(0), y.stride(0), eps, BLOCK=BLOCK, num_warps=warps)
    ### END SOLUTION
