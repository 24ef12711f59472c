"""CUDA: the row max starts at 0 (the integer cousin of FLT_MIN): rows whose max is negative go wrong."""
EXERCISE = "ch06.softmax_int8_cuda"
CELL = "softmax_int8_cuda"
PATCH = [("    int m = -128;", "    int m = 0;")]
LOSES = ["test_softmax_int8_cuda", "test_softmax_int8_cuda_hidden"]
