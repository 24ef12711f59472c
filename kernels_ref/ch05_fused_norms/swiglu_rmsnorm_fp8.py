"""Reference: SwiGLU + residual + RMSNorm + per-row fp8 (e4m3) quantisation in one Triton kernel
(Chapter 5, exercise 5). Every reduction in fp32; the fp8 value is y / scale with
scale = amax / 448 per row (448: the largest e4m3 value).

In CPU mode the kernel writes y / scale in float32 and PyTorch converts it to e4m3: the Triton
interpreter's own float32 -> e4m3 conversion loses the carry when rounding up (127.3 -> 64)."""
import triton
import triton.language as tl

# %% notebook
@triton.jit
def swiglu_rmsnorm_fp8_kernel(gate_ptr, up_ptr, r_ptr, g_ptr, q_ptr, s_ptr, cols, eps, BLOCK: tl.constexpr):
    ### BEGIN SOLUTION
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    a = tl.load(gate_ptr + row * cols + c, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(up_ptr + row * cols + c, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + row * cols + c, mask=mask, other=0.0).to(tl.float32)
    h = a * tl.sigmoid(a) * u + r  # silu(gate) * up + residual, in registers
    rstd = tl.rsqrt(tl.sum(h * h, 0) / cols + eps)
    y = h * rstd * tl.load(g_ptr + c, mask=mask, other=0.0).to(tl.float32)
    scale = tl.maximum(tl.max(tl.abs(y), 0), 1e-12) / 448.0  # a row of zeros: no 0/0
    tl.store(s_ptr + row, scale)
    q = tl.minimum(tl.maximum(y / scale, -448.0), 448.0)  # rounding may land a hair past 448
    tl.store(q_ptr + row * cols + c, q.to(q_ptr.dtype.element_ty), mask=mask)  # e4m3 on a GPU
    ### END SOLUTION


def swiglu_rmsnorm_fp8(gate, up, residual, gamma, q, scale, eps):
    """q (rows, cols) float8_e4m3fn and scale (rows,) float32 such that q * scale ~ RMSNorm(silu(gate) * up
    + residual) * gamma; gate, up, residual (rows, cols) and gamma (cols,) bf16, contiguous."""
    ### BEGIN SOLUTION
    rows, cols = gate.shape
    BLOCK = triton.next_power_of_2(cols)
    warps = min(16, max(1, BLOCK // 512))
    out = q if gate.is_cuda else q.new_empty(q.shape, dtype=scale.dtype)  # CPU: the interpreter's e4m3
    swiglu_rmsnorm_fp8_kernel[(rows,)](gate, up, residual, gamma, out, scale, cols, eps,  # cast is wrong,
                                       BLOCK=BLOCK, num_warps=warps)                       # so stage fp32
    if out is not q:
        q.copy_(out)  # PyTorch's float32 -> e4m3 conversion (round to nearest even)
    ### END SOLUTION
