"""Reference: Triton row sum over column tiles (Chapter 2, exercise 4).

I/O: read x once + write one float per row. Each program keeps a BLOCK-wide vector of
partial sums across the tiles and reduces it once at the end.
"""
import triton
import triton.language as tl

# %% notebook
@triton.jit
def row_sum_kernel(x_ptr, y_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    """One program per row: add the row tile by tile, then reduce the BLOCK partial sums."""
    ### BEGIN SOLUTION
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))
    ### END SOLUTION


def row_sum_triton(x, y):
    """y[r] = sum of row r of x; x is float32 (rows, cols), y float32 (rows,)."""
    ### BEGIN SOLUTION
    rows, cols = x.shape
    BLOCK = min(triton.next_power_of_2(cols), 2048)
    row_sum_kernel[(rows,)](x, y, cols, x.stride(0), BLOCK=BLOCK, num_warps=8 if BLOCK >= 2048 else 4)
    ### END SOLUTION
