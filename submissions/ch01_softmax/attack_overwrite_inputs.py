"""Attack: the kernel zeroes its input x and writes 1/cols: softmax of the zeroed row (passed the old engine,
which computed the reference after the run, from the same tensors)."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("    e = tl.exp(x - tl.max(x, axis=0))  # masked lanes: exp(-inf) = 0\n"
          "    tl.store(y_ptr + row * y_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)",
          "    tl.store(x_ptr + row * x_row_stride + cols, tl.zeros([BLOCK], dtype=tl.float32), mask=mask)\n"
          "    tl.store(y_ptr + row * y_row_stride + cols, tl.zeros([BLOCK], dtype=tl.float32) + 1.0 / n_cols,"
          " mask=mask)")]
LOSES = ["test_softmax_triton", "test_softmax_triton_hidden", "test_softmax_triton_bandwidth"]
