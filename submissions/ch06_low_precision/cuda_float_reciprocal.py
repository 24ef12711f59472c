"""CUDA: floating point sneaks in: the reciprocal by a double division instead of Newton's iteration."""
EXERCISE = "ch06.softmax_int8_cuda"
CELL = "softmax_int8_cuda"
PATCH = [("    long long inv = NEWTON_A - mul_q31(d, NEWTON_B);\n"
          "    for (int it = 0; it < 3; ++it) inv = rshift_round(inv * ((2LL << 29) - mul_q31(d, inv)), 29);",
          "    long long inv = (long long)(1152921504606846976.0 / (double)d + 0.5);  // 2^60 / d: 1/d in Q2.29")]
LOSES = ["test_softmax_int8_cuda", "test_softmax_int8_cuda_hidden"]
