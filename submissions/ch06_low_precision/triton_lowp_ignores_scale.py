"""Triton, bf16/fp8 softmax: the row scale is ignored: the softmax of x, not of x * scale (right only where
the scale happens to be 1)."""
EXERCISE = "ch06.softmax_lowp_triton"
CELL = "softmax_lowp_triton"
PATCH = [(".to(tl.float32) * s\n", ".to(tl.float32)\n")]
LOSES = ["test_softmax_lowp_triton", "test_softmax_lowp_triton_hidden",
         "test_softmax_lowp_triton_bandwidth"]  # not timed: wrong
