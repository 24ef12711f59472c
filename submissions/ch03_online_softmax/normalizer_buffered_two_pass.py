"""Keeps the whole stream in a list, then two passes over the list (max, then sum): right numbers and one read
of the stream, but it holds every value (loses only memory: the stream is made as it is read, 2^21 values)."""
EXERCISE = "ch03.online_normalizer"
CELL = "online_normalizer"
PATCH = [("    m, d = -math.inf, 0.0\n    for x in stream:\n        if x > m:",
          "    xs = list(stream)  # kept, so that it can be read twice\n"
          "    m = max(xs, default=-math.inf)\n"
          "    d = 0.0 if m == -math.inf else sum(math.exp(x - m) for x in xs)\n"
          "    for x in []:\n        if x > m:")]
LOSES = ["test_online_normalizer_memory"]
