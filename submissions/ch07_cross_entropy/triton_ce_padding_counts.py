"""Triton cross-entropy: padding lanes of the last block load 0 instead of -inf in the first pass, so each adds
e^(0 - m) to the sum (Chapter 1's bug, in a loop over blocks)."""
EXERCISE = "ch07.cross_entropy_triton"
CELL = "cross_entropy_triton"
PATCH = [("""            x = tl.load(x_ptr + base + start + c, mask=mask, other=-float("inf"),
                        eviction_policy="evict_last").to(tl.float32)
""", """            x = tl.load(x_ptr + base + start + c, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
""")]
LOSES = ["test_cross_entropy_triton", "test_cross_entropy_triton_hidden",
         "test_cross_entropy_triton_bandwidth"]  # not timed: wrong
