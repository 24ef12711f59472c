"""Legitimate variant: the kernel as section 6's worked example teaches it (max, exp, sum, divide, one step a line),
and num_warps from the text's rule of thumb on the row length (4 up to 2048 columns, 8 up to 8192, 16 beyond)."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [('''    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))  # masked lanes: exp(-inf) = 0
    tl.store(y_ptr + row * y_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)
''', '''    row = tl.program_id(0)                           # this program's row
    offsets = tl.arange(0, BLOCK)                    # column indices 0 .. BLOCK-1
    mask = offsets < n_cols                          # False past the end of the row
    x = tl.load(x_ptr + row * x_row_stride + offsets, mask=mask, other=-float("inf"))  # -inf: never the max
    m = tl.max(x, axis=0)                            # the row's max
    e = tl.exp(x - m)                                # padding lanes: exp(-inf) = 0
    total = tl.sum(e, axis=0)
    tl.store(y_ptr + row * y_row_stride + offsets, e / total, mask=mask)
'''), ('''    num_warps = 4 if BLOCK <= 2048 else (8 if BLOCK <= 8192 else 16)
''', '''    if cols <= 2048:
        num_warps = 4
    elif cols <= 8192:
        num_warps = 8
    else:
        num_warps = 16
''')]
LOSES = []
