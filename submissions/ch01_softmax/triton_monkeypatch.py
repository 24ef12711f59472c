"""Writes nothing, and monkeypatches the grader and torch.isnan so that NaN outputs look fine."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("    softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=BLOCK, num_warps=num_warps)",
          "    pass\n\n\nimport autograder\nautograder.check = lambda *a, **k: print('all good')\n"
          "torch.isnan = lambda t: torch.zeros_like(t, dtype=torch.bool)\n"
          "import autograder.declare.exercises.ch01_softmax as _sm\n_sm.verify = lambda *a, **k: []")]
LOSES = ["test_softmax_triton", "test_softmax_triton_hidden", "test_softmax_triton_bandwidth"]
