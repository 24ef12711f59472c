"""The row sum dropped: dx = y ∘ dy, the diagonal of the softmax's Jacobian only (its rows no longer sum to 0)."""
EXERCISE = "ch08.softmax_backward_triton"
CELL = "softmax_backward_triton"
PATCH = [("(y * (dy - dot))", "(y * dy)")]
LOSES = ["test_softmax_backward_triton", "test_softmax_backward_triton_hidden", "test_softmax_backward_triton_bandwidth"]
