"""An endless loop in the kernel: the check must time out and the notebook go on."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
# The loop stores, so the compiler cannot delete it (a loop without side effects was).
PATCH = [("    row = tl.program_id(0)\n", "    row = tl.program_id(0)\n    i = 0\n    while i < n_cols:\n        tl.store(y_ptr + row * y_row_stride, 0.0)\n")]
LOSES = ["test_softmax_triton", "test_softmax_triton_hidden", "test_softmax_triton_bandwidth"]
