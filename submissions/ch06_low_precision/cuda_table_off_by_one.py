"""CUDA: the table used one entry off (bit 23 + j gets entry j): e^-1/4 never applied, each bit gets the next factor."""
EXERCISE = "ch06.softmax_int8_cuda"
CELL = "softmax_int8_cuda"
PATCH = [("        if ((big >> (24 + j)) & 1) h = mul_q31(h, EXP_NEG_QUARTERS[j]);",
          "        if ((big >> (23 + j)) & 1) h = mul_q31(h, EXP_NEG_QUARTERS[j]);")]
LOSES = ["test_softmax_int8_cuda", "test_softmax_int8_cuda_hidden"]
