"""CUDA: one Newton iteration for the reciprocal."""
EXERCISE = "ch06.softmax_int8_cuda"
CELL = "softmax_int8_cuda"
PATCH = [("    for (int it = 0; it < 3; ++it)", "    for (int it = 0; it < 1; ++it)")]
LOSES = ["test_softmax_int8_cuda", "test_softmax_int8_cuda_hidden"]
