"""Correct but stalled: a whole block reduction (two barriers) for every 256-column tile."""
EXERCISE = "ch02.row_sum_cuda"
CELL = "row_sum_cuda"
PATCH = [("    float s = 0.f;\n    if ((cols & 3) == 0) {", "    float s = 0.f;\n    for (int c0 = 0; c0 < cols; c0 += blockDim.x) {\n        int c = c0 + threadIdx.x;\n        s += block_reduce_sum(c < cols ? xr[c] : 0.f, smem);\n    }\n    if (threadIdx.x == 0) y[blockIdx.x] = s;\n    return;\n    if ((cols & 3) == 0) {")]
LOSES = ["test_row_sum_cuda_bandwidth"]
