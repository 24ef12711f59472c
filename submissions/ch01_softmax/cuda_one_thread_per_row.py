"""Correct but naive: thread 0 of each block does the whole row; too slow for the bandwidth bar."""
EXERCISE = "ch01.softmax_cuda"
CELL = "softmax_cuda"
PATCH = [("    float m = -INFINITY;\n    for (int c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, xr[c]);\n    m = block_max(m, buf);\n",
          "    if (threadIdx.x != 0) return;\n    float m = -INFINITY;\n    for (int c = 0; c < cols; ++c) m = fmaxf(m, xr[c]);\n"),
         ("    for (int c = threadIdx.x; c < cols; c += THREADS) d += __expf(xr[c] - m);\n    float inv = 1.f / block_sum(d, buf);\n",
          "    for (int c = 0; c < cols; ++c) d += __expf(xr[c] - m);\n    float inv = 1.f / d;\n"),
         ("    for (int c = threadIdx.x; c < cols; c += THREADS) yr[c] = __expf(xr[c] - m) * inv;",
          "    for (int c = 0; c < cols; ++c) yr[c] = __expf(xr[c] - m) * inv;")]
LOSES = ["test_softmax_cuda_bandwidth"]
