"""Triton, bf16/fp8 softmax: the row max is not subtracted ("bf16 has float32's range"): a logit above 88.72
overflows float32's exp, and the row becomes inf / inf = NaN."""
EXERCISE = "ch06.softmax_lowp_triton"
CELL = "softmax_lowp_triton"
PATCH = [("    e = tl.exp(z - m)\n", "    e = tl.exp(z)\n")]
LOSES = ["test_softmax_lowp_triton", "test_softmax_lowp_triton_hidden",
         "test_softmax_lowp_triton_bandwidth"]  # not timed: wrong
