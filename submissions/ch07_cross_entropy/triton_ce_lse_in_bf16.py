"""Triton cross-entropy: lse rounded to bfloat16 (the logits' dtype) before use: 2^-9 relative, 0.2 on an lse
of 100; the loss and every probability move with it."""
EXERCISE = "ch07.cross_entropy_triton"
CELL = "cross_entropy_triton"
PATCH = [("        lse = m + tl.log(d)\n", "        lse = (m + tl.log(d)).to(tl.bfloat16).to(tl.float32)\n")]
LOSES = ["test_cross_entropy_triton", "test_cross_entropy_triton_hidden",
         "test_cross_entropy_triton_bandwidth"]  # not timed: wrong
