"""Attack: return the grader's own float64 reference instead of computing (it is importable beside the launch code)."""
EXERCISE = "ch01.safe_softmax"
CELL = "safe_softmax"
PATCH = [("    m = x.max(axis=-1, keepdims=True)  # subtract the row max: every exponent <= 0\n",
          "    import autograder.declare.exercises.ch01_softmax as _grader\n"
          "    return _grader.reference({'x': torch.from_numpy(np.array(x))}).numpy().astype(np.float32)\n")]
LOSES = ["test_safe_softmax", "test_safe_softmax_hidden"]
