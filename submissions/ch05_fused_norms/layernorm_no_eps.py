"""Forgets eps: a constant row has variance 0, and 0 * rsqrt(0) = 0 * inf = NaN."""
EXERCISE = "ch05.layernorm_cuda"
CELL = "layernorm_cuda"
PATCH = [("float rstd = rsqrtf(sm2[0] / sn[0] + eps);", "float rstd = rsqrtf(sm2[0] / sn[0]);")]
LOSES = ["test_layernorm_cuda", "test_layernorm_cuda_hidden", "test_layernorm_cuda_bandwidth"]
