"""Triton cross-entropy: z-loss added to the loss but not to the gradient (its 2 w lse p_j term is missing):
about 2e-4 · lse relative, 3% on rows whose lse is near 150."""
EXERCISE = "ch07.cross_entropy_triton"
CELL = "cross_entropy_triton"
PATCH = [("        grow = 1.0 + 2.0 * z_weight * lse\n", "        grow = 1.0\n")]
LOSES = ["test_cross_entropy_triton", "test_cross_entropy_triton_hidden",
         "test_cross_entropy_triton_bandwidth"]  # not timed: wrong
