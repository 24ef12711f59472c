"""Linear + cross-entropy: right, but launched with two warps per program: the same 64 x 128 tiles of tl.dot
on half of a warpgroup, well below the tensor cores' rate (loses only the throughput test). On an H200 it ran at
0.30 of PyTorch's materialising path against the reference's 0.50 (benchmarks/evidence/ch07_lce_h200_2026-12-03.json);
one warp per program was slower still, too slow to time at the graded shape in the bench's budget."""
EXERCISE = "ch07.linear_cross_entropy_triton"
CELL = "linear_cross_entropy_triton"
PATCH = [("BLOCK_V=BLOCK_V, BLOCK_H=BLOCK_H, num_warps=8)", "BLOCK_V=BLOCK_V, BLOCK_H=BLOCK_H, num_warps=2)")]
LOSES = ["test_linear_cross_entropy_triton_throughput"]
