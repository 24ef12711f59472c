"""Accumulates in float16: rows near 1000 overflow 65504, and every add rounds to 11 bits."""
EXERCISE = "ch02.row_sum_triton"
CELL = "row_sum_triton"
PATCH = [("    acc = tl.zeros([BLOCK], dtype=tl.float32)", "    acc = tl.zeros([BLOCK], dtype=tl.float16)"),
         ("mask=cols < n_cols, other=0.0)", "mask=cols < n_cols, other=0.0).to(tl.float16)")]
LOSES = ["test_row_sum_triton", "test_row_sum_triton_hidden", "test_row_sum_triton_bandwidth"]
