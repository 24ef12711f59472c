"""NumPy softmax without the max: overflows on large rows."""
EXERCISE = "ch01.safe_softmax"
CELL = "safe_softmax"
PATCH = [("e = np.exp(x - m)", "e = np.exp(x)")]
LOSES = ["test_safe_softmax", "test_safe_softmax_hidden"]
