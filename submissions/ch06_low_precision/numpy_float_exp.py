"""NumPy: floating point sneaks in: e^z by np.exp of a float, rounded back to Q0.31."""
EXERCISE = "ch06.softmax_int8_numpy"
CELL = "softmax_int8_numpy"
PATCH = [("    e = exp_neg_q31(z)                                    # Q0.31",
          "    e = np.where(z < -ONE_Q31, 0, np.minimum(np.rint(np.exp(z / 2**26) * 2**31), ONE_Q31 - 1))\n"
          "    e = e.astype(np.int64)")]
LOSES = ["test_softmax_int8_numpy", "test_softmax_int8_numpy_hidden"]
