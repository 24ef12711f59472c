"""Triton cross-entropy: z-loss weight hard-coded to 1e-4 (the usual value) instead of the z_weight argument."""
EXERCISE = "ch07.cross_entropy_triton"
CELL = "cross_entropy_triton"
PATCH = [("        loss = lse - (1.0 - smoothing) * xt - smoothing / cols * sx + z_weight * lse * lse\n",
          "        loss = lse - (1.0 - smoothing) * xt - smoothing / cols * sx + 1e-4 * lse * lse\n"),
         ("        grow = 1.0 + 2.0 * z_weight * lse\n", "        grow = 1.0 + 2.0 * 1e-4 * lse\n")]
LOSES = ["test_cross_entropy_triton_hidden"]
