"""Attack: right on the first call, then a cached answer for every later call (state kept between calls)."""
EXERCISE = "ch01.safe_softmax"
CELL = "safe_softmax"
PATCH = [("def safe_softmax(x):", "_seen = {}\n\n\ndef safe_softmax(x):"),
         ("    m = x.max(axis=-1, keepdims=True)  # subtract the row max: every exponent <= 0\n",
          "    if _seen:\n"
          "        first = next(iter(_seen.values()))\n"
          "        return np.resize(first, x.shape).astype(np.float32)\n"
          "    m = x.max(axis=-1, keepdims=True)  # subtract the row max: every exponent <= 0\n"
          "    _seen[x.shape] = np.exp(x - m) / np.exp(x - m).sum(axis=-1, keepdims=True)\n")]
LOSES = ["test_safe_softmax", "test_safe_softmax_hidden"]
