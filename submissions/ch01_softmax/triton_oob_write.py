"""Unmasked store: writes BLOCK elements per row, past the end of the output."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("e / tl.sum(e, axis=0), mask=mask)", "e / tl.sum(e, axis=0))")]
LOSES = ["test_softmax_triton", "test_softmax_triton_hidden", "test_softmax_triton_bandwidth"]
