"""No loop over tiles: only the first BLOCK (at most 2048) columns of each row are added."""
EXERCISE = "ch02.row_sum_triton"
CELL = "row_sum_triton"
PATCH = [("    for start in range(0, n_cols, BLOCK):\n        cols = start + tl.arange(0, BLOCK)\n        acc += tl.load(",
          "    for start in range(0, 1):\n        cols = start + tl.arange(0, BLOCK)\n        acc += tl.load(")]
LOSES = ["test_row_sum_triton", "test_row_sum_triton_hidden", "test_row_sum_triton_bandwidth"]
