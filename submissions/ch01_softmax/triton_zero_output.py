"""Zero output: the kernel stores zeros (a tolerance on |y - ref| alone would let this pass)."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("tl.store(y_ptr + row * y_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)",
          "tl.store(y_ptr + row * y_row_stride + cols, e * 0.0, mask=mask)")]
LOSES = ["test_softmax_triton", "test_softmax_triton_hidden", "test_softmax_triton_bandwidth"]
