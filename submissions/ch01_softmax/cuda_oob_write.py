"""Writes y one element to the right: the last row writes past the end of the output."""
EXERCISE = "ch01.softmax_cuda"
CELL = "softmax_cuda"
PATCH = [("yr[c] = __expf(xr[c] - m) * inv;", "yr[c + 1] = __expf(xr[c] - m) * inv;")]
LOSES = ["test_softmax_cuda", "test_softmax_cuda_hidden", "test_softmax_cuda_bandwidth"]
