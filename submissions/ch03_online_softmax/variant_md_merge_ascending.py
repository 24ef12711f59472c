"""Legitimate variant: the warp merge with offsets 1, 2, 4, 8, 16 (another merge order)."""
EXERCISE = "ch03.md_ops"
CELL = "md_ops"
PATCH = [("    for (int offset = 16; offset > 0; offset >>= 1) {\n",
          "    for (int offset = 1; offset < 32; offset <<= 1) {\n")]
LOSES = []
