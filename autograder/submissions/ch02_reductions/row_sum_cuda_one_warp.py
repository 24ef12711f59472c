"""Correct but starved: only the first warp of each block reads the row (32 of 256 threads)."""
EXERCISE = "ch02.row_sum_cuda"
CELL = "row_sum_cuda"
PATCH = [("    float s = 0.f;\n    if ((cols & 3) == 0) {", "    float s = 0.f;\n    if (threadIdx.x >= 32) {\n    } else if ((cols & 3) == 0) {"),
         ("for (int c = threadIdx.x; c < cols / 4; c += blockDim.x) {", "for (int c = threadIdx.x; c < cols / 4; c += 32) {"),
         ("for (int c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];", "for (int c = threadIdx.x; c < cols; c += 32) s += xr[c];")]
LOSES = ["test_row_sum_cuda_bandwidth"]
