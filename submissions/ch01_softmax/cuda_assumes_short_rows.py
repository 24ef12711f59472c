"""Assumes cols <= blockDim: each thread handles one column, so rows wider than 256 lose the rest."""
EXERCISE = "ch01.softmax_cuda"
CELL = "softmax_cuda"
PATCH = [("    for (int c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, xr[c]);",
          "    if (threadIdx.x < cols) m = xr[threadIdx.x];"),
         ("    for (int c = threadIdx.x; c < cols; c += THREADS) d += __expf(xr[c] - m);",
          "    if (threadIdx.x < cols) d = __expf(xr[threadIdx.x] - m);"),
         ("    for (int c = threadIdx.x; c < cols; c += THREADS) yr[c] = __expf(xr[c] - m) * inv;",
          "    if (threadIdx.x < cols) yr[threadIdx.x] = __expf(xr[threadIdx.x] - m) * inv;")]
LOSES = ["test_softmax_cuda", "test_softmax_cuda_hidden", "test_softmax_cuda_bandwidth"]
