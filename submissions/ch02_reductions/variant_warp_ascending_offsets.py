"""Legitimate variant: the butterfly with offsets 1, 2, 4, 8, 16 (another reduction order)."""
EXERCISE = "ch02.warp_reduce"
CELL = "warp_reduce"
PATCH = [("    for (int offset = 16; offset > 0; offset >>= 1)  // lane i pairs with lane i ^ offset\n",
          "    for (int offset = 1; offset < 32; offset <<= 1)  // lane i pairs with lane i ^ offset\n")]
LOSES = []
