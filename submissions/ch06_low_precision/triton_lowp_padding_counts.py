"""Triton, bf16/fp8 softmax: the padding lanes of the power-of-two block load 0 and are not set to -inf, so
each adds e^(0 - m) to the sum: invisible on rows whose max is large, wrong on near-uniform rows."""
EXERCISE = "ch06.softmax_lowp_triton"
CELL = "softmax_lowp_triton"
PATCH = [('    z = tl.where(mask, z, -float("inf"))  # padding lanes add e^(-inf) = 0 to the sum\n', "")]
LOSES = ["test_softmax_lowp_triton", "test_softmax_lowp_triton_hidden",
         "test_softmax_lowp_triton_bandwidth"]  # not timed: wrong
