"""Reference: Triton row softmax, one program per row (Chapter 1, exercise 2).

I/O: read x once + write y once (2 · rows · cols · 4 B); the whole row stays in registers.
"""
import triton
import triton.language as tl

# %% notebook
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    """One program per row: load the row, subtract its max, exponentiate, normalise."""
    ### BEGIN SOLUTION
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))  # masked lanes: exp(-inf) = 0
    tl.store(y_ptr + row * y_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)
    ### END SOLUTION


def softmax_triton(x, y):
    """Write softmax(x) along each row into y; x and y are float32 (rows, cols)."""
    ### BEGIN SOLUTION
    rows, cols = x.shape
    BLOCK = triton.next_power_of_2(cols)
    num_warps = 4 if BLOCK <= 2048 else (8 if BLOCK <= 8192 else 16)
    softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=BLOCK, num_warps=num_warps)
    ### END SOLUTION
