"""Shuffles with a half-warp member mask (0x0000ffff) while all 32 lanes take part."""
EXERCISE = "ch02.warp_reduce"
CELL = "warp_reduce"
PATCH = [("        v += __shfl_xor_sync(FULL_MASK, v, offset);", "        v += __shfl_xor_sync(0x0000ffffu, v, offset);")]
LOSES = ["test_warp_reduce", "test_warp_reduce_hidden", "test_block_reduce", "test_block_reduce_hidden",
         "test_row_sum_cuda", "test_row_sum_cuda_hidden", "test_row_sum_cuda_bandwidth"]
