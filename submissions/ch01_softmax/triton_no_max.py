"""No max subtraction: exp(x) overflows near x = 89 and underflows to 0/0 near x = -104."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("e = tl.exp(x - tl.max(x, axis=0))", "e = tl.exp(x)")]
LOSES = ["test_softmax_triton", "test_softmax_triton_hidden", "test_softmax_triton_bandwidth"]
