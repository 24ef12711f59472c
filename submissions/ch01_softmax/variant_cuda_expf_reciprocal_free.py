"""Legitimate variant: expf (the precise exp) and a division per element instead of a reciprocal."""
EXERCISE = "ch01.softmax_cuda"
CELL = "softmax_cuda"
PATCH = [("    for (int c = threadIdx.x; c < cols; c += THREADS) d += __expf(xr[c] - m);\n"
          "    float inv = 1.f / block_sum(d, buf);\n\n"
          "    for (int c = threadIdx.x; c < cols; c += THREADS) yr[c] = __expf(xr[c] - m) * inv;\n",
          "    for (int c = threadIdx.x; c < cols; c += THREADS) d += expf(xr[c] - m);\n"
          "    float s = block_sum(d, buf);\n\n"
          "    for (int c = threadIdx.x; c < cols; c += THREADS) yr[c] = expf(xr[c] - m) / s;\n")]
LOSES = []
