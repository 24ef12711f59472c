"""Legitimate variant: the bit length of each row's sum by Python's int.bit_length, row by row."""
EXERCISE = "ch06.softmax_int8_numpy"
CELL = "softmax_int8_numpy"
PATCH = [("    k = np.zeros_like(s)                    # the bit length of s, without np.log2 (floating point)\n"
          "    t = s.copy()\n"
          "    while (t > 0).any():\n"
          "        k += t > 0\n"
          "        t >>= 1\n",
          "    k = np.array([int(v).bit_length() for v in s.ravel()], dtype=np.int64).reshape(s.shape)\n")]
LOSES = []
