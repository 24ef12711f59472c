"""Legitimate variant: the bit length of the sum by __clz (s <= 2^31 fits 32 unsigned bits)."""
EXERCISE = "ch06.softmax_int8_cuda"
CELL = "softmax_int8_cuda"
PATCH = [("    int k = 0;                                   // bit length of s\n    while ((s >> k) != 0) ++k;",
          "    int k = 32 - __clz((unsigned)s);             // bit length of s")]
LOSES = []
