"""Linear + cross-entropy: an ignored row (target -100) gets lse - 0 as its loss instead of 0 (its target
matches no word, so the target logit stays 0)."""
EXERCISE = "ch07.linear_cross_entropy_triton"
CELL = "linear_cross_entropy_triton"
PATCH = [("    tl.store(loss_ptr + rows, tl.where(t == -100, 0.0, lse - xt), mask=rmask)\n",
          "    tl.store(loss_ptr + rows, lse - xt, mask=rmask)\n")]
LOSES = ["test_linear_cross_entropy_triton", "test_linear_cross_entropy_triton_hidden",
         "test_linear_cross_entropy_triton_throughput"]  # not timed: wrong
