"""Triton cross-entropy: the target column's gradient subtracts 1, as without smoothing; with smoothing the
target's weight is 1 - ε."""
EXERCISE = "ch07.cross_entropy_triton"
CELL = "cross_entropy_triton"
PATCH = [("            g = tl.where(start + c == t, g - (1.0 - smoothing), g)\n",
          "            g = tl.where(start + c == t, g - 1.0, g)\n")]
LOSES = ["test_cross_entropy_triton", "test_cross_entropy_triton_hidden",
         "test_cross_entropy_triton_bandwidth"]  # not timed: wrong
