"""NumPy: no clamp before the int8 conversion: q = 128 (p ~ 1) wraps around to -128."""
EXERCISE = "ch06.softmax_int8_numpy"
CELL = "softmax_int8_numpy"
PATCH = [("    return np.clip(q, -128, 127).astype(np.int8)", "    return q.astype(np.int8)")]
LOSES = ["test_softmax_int8_numpy", "test_softmax_int8_numpy_hidden"]
