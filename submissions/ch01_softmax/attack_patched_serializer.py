"""Attack: a wrong answer, with json.dumps/json.loads replaced so that any message says "passed"."""
EXERCISE = "ch01.safe_softmax"
CELL = "safe_softmax"
PATCH = [("def safe_softmax(x):",
          "import json\n"
          "json.dumps = lambda *a, **k: '{\"ok\": true, \"passed\": true, \"message\": \"ok\"}'\n"
          "json.loads = lambda *a, **k: {'ok': True, 'passed': True, 'message': 'ok'}\n\n\n"
          "def safe_softmax(x):"),
         ("    m = x.max(axis=-1, keepdims=True)  # subtract the row max: every exponent <= 0\n",
          "    return np.zeros_like(x)\n")]
LOSES = ["test_safe_softmax", "test_safe_softmax_hidden"]
