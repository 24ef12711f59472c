"""Reference: Triton online softmax over column tiles, for rows of any length (Chapter 3, exercise 6).

Pass 1 keeps a BLOCK-wide vector of (m, d) states across the tiles and merges them at the end;
pass 2 re-reads the row and writes. 2 reads + 1 write; fp16/bf16 in and out, fp32 inside.
"""
import triton
import triton.language as tl

# %% notebook
@triton.jit
def online_softmax_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    """One program per row, BLOCK columns at a time."""
    ### BEGIN SOLUTION
    row = tl.program_id(0)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    m = tl.full([BLOCK], -float("inf"), tl.float32)  # one (m, d) state per lane
    d = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        base = tl.where(m_new == -float("inf"), 0.0, m_new)  # a lane with no data yet: no NaN
        d = d * tl.exp(m - base) + tl.exp(x - base)
        m = m_new
    m_row = tl.max(m, axis=0)
    d_row = tl.sum(d * tl.exp(m - m_row), axis=0)  # merge the lanes' states
    inv = 1.0 / d_row
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
        tl.store(y_row + cols, (tl.exp(x - m_row) * inv).to(y_ptr.dtype.element_ty), mask=mask)
    ### END SOLUTION


def online_softmax_triton(x, y):
    """softmax(x) along each row into y; x, y (rows, cols), float32, float16 or bfloat16 (same dtype)."""
    ### BEGIN SOLUTION
    rows, cols = x.shape
    BLOCK = min(triton.next_power_of_2(cols), 4096)
    online_softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=BLOCK, num_warps=8)
    ### END SOLUTION
