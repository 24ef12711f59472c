"""Triton, bf16/fp8 softmax: the probabilities are rounded to float16 before bfloat16: float16 has more
significant bits but far less range, and every probability below its smallest subnormal (about 6e-8)
becomes 0."""
EXERCISE = "ch06.softmax_lowp_triton"
CELL = "softmax_lowp_triton"
PATCH = [("(e / d).to(tl.bfloat16)", "(e / d).to(tl.float16).to(tl.bfloat16)")]
LOSES = ["test_softmax_lowp_triton", "test_softmax_lowp_triton_hidden",
         "test_softmax_lowp_triton_bandwidth"]  # not timed: wrong
