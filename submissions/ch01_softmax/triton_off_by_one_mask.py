"""Off-by-one mask: cols <= n_cols reads and writes one element past the row."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("mask = cols < n_cols", "mask = cols <= n_cols")]
LOSES = ["test_softmax_triton", "test_softmax_triton_hidden", "test_softmax_triton_bandwidth"]
