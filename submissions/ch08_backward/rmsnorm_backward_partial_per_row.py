"""Correct but slow: one program per row, so dgamma's first stage writes a float32 row of partial sums for every row
of x (4 bytes written and read again per element, next to the 6 the kernel must move in bfloat16): it loses the
bandwidth check."""
EXERCISE = "ch08.rmsnorm_backward_triton"
CELL = "rmsnorm_backward_triton"
PATCH = [("    parts = min(rows, per_sm * sms)  # each program loops over its rows\n", "    parts = rows\n")]
LOSES = ["test_rmsnorm_backward_triton_bandwidth"]
