"""Known wrong: Exercise 5 without the scale's clamp. A row whose h is all zeros has max |y| = 0, so scale = 0 and
q = y / scale = 0/0: NaN in fp8 (e4m3 has no infinity). The adversarial cases hold such rows (gate, up and residual
all zero), so correctness and the hidden tests fail; every other row is right."""
EXERCISE = "ch05.swiglu_rmsnorm_fp8_triton"
CELL = "swiglu_rmsnorm_fp8_triton"
PATCH = [('''    scale = tl.maximum(tl.max(tl.abs(y), 0), 1e-12) / 448.0  # a row of zeros: no 0/0
''', '''    scale = tl.max(tl.abs(y), 0) / 448.0
''')]
LOSES = ["test_swiglu_rmsnorm_fp8_triton", "test_swiglu_rmsnorm_fp8_triton_hidden"]
