"""Triton cross-entropy: label smoothing in the loss, but the gradient forgets the ε / V every column gets."""
EXERCISE = "ch07.cross_entropy_triton"
CELL = "cross_entropy_triton"
PATCH = [("            g = tl.exp(x - lse) * grow - smoothing / cols\n", "            g = tl.exp(x - lse) * grow\n")]
LOSES = ["test_cross_entropy_triton", "test_cross_entropy_triton_hidden",
         "test_cross_entropy_triton_bandwidth"]  # not timed: wrong
