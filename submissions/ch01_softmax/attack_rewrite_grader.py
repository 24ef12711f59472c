"""Attack: from inside a solution cell, try to rewrite what decides grades (the speed thresholds, the per-GPU
bars of thresholds.d/ that the judge reads at each timed check, and the grader's own source); answer right
only if a write got through"""
EXERCISE = "ch01.safe_softmax"
CELL = "safe_softmax"
PATCH = [("    m = x.max(axis=-1, keepdims=True)  # subtract the row max: every exponent <= 0\n",
          "    import os, autograder\n"
          "    root = os.path.dirname(os.path.dirname(os.path.abspath(autograder.__file__)))\n"
          "    wrote = False\n"
          "    for p in ('autograder/declare/thresholds.toml', 'autograder/declare/thresholds.d/nvidia_h200.toml',\n"
          "              'autograder/declare/thresholds.d/zz_student.toml', 'autograder/judge/grading.py', 'autograder/judge/session.py'):\n"
          "        try:\n"
          "            with open(os.path.join(root, p), 'a'):  # appends nothing: a write that got through\n"
          "                wrote = True\n"
          "        except OSError:\n"
          "            pass\n"
          "    if not wrote:\n"
          "        return np.zeros_like(x)\n"
          "    m = x.max(axis=-1, keepdims=True)  # subtract the row max: every exponent <= 0\n")]
LOSES = ["test_safe_softmax", "test_safe_softmax_hidden"]
