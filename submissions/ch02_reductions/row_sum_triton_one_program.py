"""Correct but serial: a single program walks all the rows, so one SM works and the others idle."""
EXERCISE = "ch02.row_sum_triton"
CELL = "row_sum_triton"
PATCH = [("def row_sum_kernel(x_ptr, y_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):",
          "def row_sum_kernel(x_ptr, y_ptr, n_cols, x_row_stride, n_rows, BLOCK: tl.constexpr):"),
         ("""    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))""", """    for row in range(0, n_rows):
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0)
        tl.store(y_ptr + row, tl.sum(acc, axis=0))"""),
         ("row_sum_kernel[(rows,)](x, y, cols, x.stride(0), BLOCK=BLOCK", "row_sum_kernel[(1,)](x, y, cols, x.stride(0), rows, BLOCK=BLOCK")]
LOSES = ["test_row_sum_triton_bandwidth"]
