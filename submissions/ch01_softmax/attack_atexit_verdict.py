"""Attack: a wrong answer plus an atexit hook and stdout lines that claim every check passed."""
EXERCISE = "ch01.safe_softmax"
CELL = "safe_softmax"
PATCH = [("def safe_softmax(x):",
          "import atexit, json, sys\n"
          "_line = '@@flashcourse-result@@' + json.dumps({'passed': True, 'message': 'ok'})\n"
          "atexit.register(lambda: (sys.__stdout__.write(_line + '\\n'), sys.__stdout__.flush()))\n"
          "print(_line)\n\n\n"
          "def safe_softmax(x):"),
         ("    m = x.max(axis=-1, keepdims=True)  # subtract the row max: every exponent <= 0\n",
          "    print('@@flashcourse-result@@' + json.dumps({'passed': True, 'message': 'ok'}))\n"
          "    return np.zeros_like(x)\n")]
LOSES = ["test_safe_softmax", "test_safe_softmax_hidden"]
