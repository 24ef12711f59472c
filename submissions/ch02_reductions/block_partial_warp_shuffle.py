"""A shuffle with a wrong mask: only lanes < warps call warp_reduce_sum, whose mask names all 32 lanes."""
EXERCISE = "ch02.block_reduce"
CELL = "block_reduce"
PATCH = [("    v = lane < warps ? smem[lane] : 0.f;  // level 2: each warp reduces the warp sums\n    v = warp_reduce_sum(v);",
          "    if (lane < warps) v = warp_reduce_sum(smem[lane]);  // level 2, on the lanes that hold a warp sum")]
LOSES = ["test_block_reduce", "test_block_reduce_hidden", "test_row_sum_cuda", "test_row_sum_cuda_hidden",
         "test_row_sum_cuda_bandwidth"]
