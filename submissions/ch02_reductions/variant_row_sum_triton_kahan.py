"""Legitimate variant: a Kahan-compensated sum across the tiles (more accurate, same traffic)."""
EXERCISE = "ch02.row_sum_triton"
CELL = "row_sum_triton"
PATCH = [("""    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0)
""", """    acc = tl.zeros([BLOCK], dtype=tl.float32)
    comp = tl.zeros([BLOCK], dtype=tl.float32)  # what acc lost to rounding so far
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0) - comp
        t = acc + v
        comp = (t - acc) - v
        acc = t
""")]
LOSES = []
