"""Legitimate variant: NumPy softmax through exp2 with log2(e), normalised by a reciprocal."""
EXERCISE = "ch01.safe_softmax"
CELL = "safe_softmax"
PATCH = [("    e = np.exp(x - m)\n    return e / e.sum(axis=-1, keepdims=True)\n",
          "    e = np.exp2((x - m) * np.float32(1.4426950408889634))\n"
          "    return e * (np.float32(1) / e.sum(axis=-1, keepdims=True))\n")]
LOSES = []
