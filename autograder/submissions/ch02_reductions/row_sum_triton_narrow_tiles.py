"""Correct but starved: 32-column tiles on a single warp, a long dependent loop per row."""
EXERCISE = "ch02.row_sum_triton"
CELL = "row_sum_triton"
PATCH = [("    BLOCK = min(triton.next_power_of_2(cols), 2048)", "    BLOCK = 32"),
         ("num_warps=8 if BLOCK >= 2048 else 4)", "num_warps=1)")]
LOSES = ["test_row_sum_triton_bandwidth"]
