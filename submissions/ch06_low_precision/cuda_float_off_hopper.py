"""CUDA: integers on an H100 or H200 only: `#if __CUDA_ARCH__ == 900` keeps the integer sum there, and every other
GPU sums in float. The judge compiles the cell for several GPU generations, so the float path is seen."""
EXERCISE = "ch06.softmax_int8_cuda"
CELL = "softmax_int8_cuda"
PATCH = [("s += rshift_round(exp_neg_q31(z), ACCUM_BITS);",
          "\n#if __CUDA_ARCH__ == 900\n        s += rshift_round(exp_neg_q31(z), ACCUM_BITS);\n#else\n"
          "        s += (long long)(__expf((float)z / 67108864.f) * 524288.f);\n#endif\n")]
LOSES = ["test_softmax_int8_cuda", "test_softmax_int8_cuda_hidden"]
