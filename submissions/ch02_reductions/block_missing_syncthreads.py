"""Drops the barrier between writing the warp sums and reading them: warps read slots not yet written."""
EXERCISE = "ch02.block_reduce"
CELL = "block_reduce"
PATCH = [("    if (lane == 0) smem[warp] = v;\n    __syncthreads();                      // every warp's sum is in smem\n",
          "    if (lane == 0) smem[warp] = v;\n")]
LOSES = ["test_block_reduce", "test_block_reduce_hidden", "test_row_sum_cuda", "test_row_sum_cuda_hidden",
         "test_row_sum_cuda_bandwidth"]
