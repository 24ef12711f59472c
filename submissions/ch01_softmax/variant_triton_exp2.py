"""Legitimate variant: exp as exp2 with log2(e) folded in (what compilers emit for __expf)."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("    e = tl.exp(x - tl.max(x, axis=0))  # masked lanes: exp(-inf) = 0\n",
          "    e = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)  # 2^(log2(e) t) = e^t\n")]
LOSES = []
