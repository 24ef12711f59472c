"""Two passes over the stream (max, then sum): right numbers, but a stream can be read only once."""
EXERCISE = "ch03.online_normalizer"
CELL = "online_normalizer"
PATCH = [("    m, d = -math.inf, 0.0\n    for x in stream:\n        if x > m:",
          "    m = max(stream)\n    d = sum(math.exp(x - m) for x in stream if x != -math.inf)\n    for x in []:\n        if x > m:")]
LOSES = ["test_online_normalizer", "test_online_normalizer_hidden", "test_online_normalizer_memory"]
