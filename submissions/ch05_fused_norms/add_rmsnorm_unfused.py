"""Correct, but two kernels: the add writes residual_out, then RMSNorm reads it back (3 reads + 2 writes)."""
EXERCISE = "ch05.add_rmsnorm_triton"
CELL = "add_rmsnorm_triton"
PATCH = [("def add_rmsnorm_triton(x, residual, gamma, y, residual_out, eps):\n", '''@triton.jit
def add_kernel(x_ptr, r_ptr, h_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < n, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + i, mask=i < n, other=0.0).to(tl.float32)
    tl.store(h_ptr + i, (x + r).to(h_ptr.dtype.element_ty), mask=i < n)


@triton.jit
def norm_kernel(h_ptr, g_ptr, y_ptr, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    h = tl.load(h_ptr + row * cols + c, mask=c < cols, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(h * h, 0) / cols + eps)
    g = tl.load(g_ptr + c, mask=c < cols, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * cols + c, (h * rstd * g).to(y_ptr.dtype.element_ty), mask=c < cols)


def add_rmsnorm_triton(x, residual, gamma, y, residual_out, eps):
    rows, cols = x.shape
    add_kernel[(triton.cdiv(rows * cols, 4096),)](x, residual, residual_out, rows * cols, BLOCK=4096, num_warps=8)
    BLOCK = triton.next_power_of_2(cols)
    norm_kernel[(rows,)](residual_out, gamma, y, cols, eps, BLOCK=BLOCK, num_warps=min(16, max(1, BLOCK // 512)))


def _fused(x, residual, gamma, y, residual_out, eps):
''')]
LOSES = ["test_add_rmsnorm_triton_bandwidth"]
