"""Legitimate variant: e^(z - m) as 2^((z - m) · log2 e), the form GPUs evaluate natively; within the
tolerance, so it must pass every check."""
EXERCISE = "ch06.softmax_lowp_triton"
CELL = "softmax_lowp_triton"
PATCH = [("    e = tl.exp(z - m)\n", "    e = tl.exp2((z - m) * 1.4426950408889634)\n")]
LOSES = []
