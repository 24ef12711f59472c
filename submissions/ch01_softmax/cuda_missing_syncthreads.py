"""Drops the barrier after each thread writes its value: the tree reads slots nobody wrote yet."""
EXERCISE = "ch01.softmax_cuda"
CELL = "softmax_cuda"
PATCH = [("    buf[t] = v;\n    __syncthreads();\n    for (int s = THREADS / 2; s > 0; s >>= 1) {   // sequential",
          "    buf[t] = v;\n    for (int s = THREADS / 2; s > 0; s >>= 1) {   // sequential")]
LOSES = ["test_softmax_cuda", "test_softmax_cuda_hidden", "test_softmax_cuda_bandwidth"]
