"""Reference: RMSNorm in Triton (Chapter 5, exercise 2): one program per row, fp32 inside, the
output rounded once (gamma * x * rstd in fp32, then to the output dtype). gamma is loaded before the
reduction, not after it: its load then overlaps the sum instead of waiting behind it (on an H100, 4096 x
16384 bf16: 95.8-95.9% of copy against 94.5-94.9% with the load after the sum; 16384 x 4096: the same
within 0.3 points; archived run gpu_2026-11-26_s9/a/liger_gap_sweep.json)."""
import triton
import triton.language as tl

# %% notebook
@triton.jit
def rmsnorm_kernel(x_ptr, g_ptr, y_ptr, cols, x_stride, y_stride, eps, BLOCK: tl.constexpr):
    ### BEGIN SOLUTION
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    x = tl.load(x_ptr + row * x_stride + c, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(g_ptr + c, mask=mask, other=0.0).to(tl.float32)  # issued now: it arrives during the reduction
    rstd = tl.rsqrt(tl.sum(x * x, 0) / cols + eps)
    tl.store(y_ptr + row * y_stride + c, (x * rstd * g).to(y_ptr.dtype.element_ty), mask=mask)  # one rounding
    ### END SOLUTION


def rmsnorm_triton(x, gamma, y, eps):
    """y = x / sqrt(mean(x²) + eps) * gamma along each row; x, y (rows, cols), gamma (cols,)."""
    ### BEGIN SOLUTION
    rows, cols = x.shape
    BLOCK = triton.next_power_of_2(cols)
    warps = min(16, max(1, BLOCK // 512))
    rmsnorm_kernel[(rows,)](x, gamma, y, cols, x.stride(0), y.stride(0), eps, BLOCK=BLOCK, num_warps=warps)
    ### END SOLUTION
