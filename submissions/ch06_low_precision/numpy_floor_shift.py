"""NumPy: an arithmetic shift (floor) where the output needs a rounding shift: outputs one step low."""
EXERCISE = "ch06.softmax_int8_numpy"
CELL = "softmax_int8_numpy"
PATCH = [("    q = rshift_round(mul_q31(e, y), 2 + k) - 128", "    q = (mul_q31(e, y) >> (2 + k)) - 128")]
LOSES = ["test_softmax_int8_numpy", "test_softmax_int8_numpy_hidden"]
