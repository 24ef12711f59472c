"""Linear + cross-entropy: right, but launched with one warp per program: the same 64 x 128 tiles of tl.dot
on a quarter of a warpgroup, far below the tensor cores' rate (loses only the throughput test)."""
EXERCISE = "ch07.linear_cross_entropy_triton"
CELL = "linear_cross_entropy_triton"
PATCH = [("BLOCK_V=BLOCK_V, BLOCK_H=BLOCK_H, num_warps=8)", "BLOCK_V=BLOCK_V, BLOCK_H=BLOCK_H, num_warps=1)")]
LOSES = ["test_linear_cross_entropy_triton_throughput"]
