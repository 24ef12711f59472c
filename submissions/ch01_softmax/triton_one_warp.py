"""Correct but starved: one warp per row holds an 8192-float row in 32 threads' registers."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("num_warps = 4 if BLOCK <= 2048 else (8 if BLOCK <= 8192 else 16)", "num_warps = 1")]
LOSES = ["test_softmax_triton_bandwidth"]
