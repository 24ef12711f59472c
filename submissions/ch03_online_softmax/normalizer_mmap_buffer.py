"""Keeps the whole stream as float64 in an anonymous mmap, where tracemalloc does not look, then two passes over
it (loses only memory: the process's peak resident memory sees every allocator)."""
EXERCISE = "ch03.online_normalizer"
CELL = "online_normalizer"
PATCH = [("    m, d = -math.inf, 0.0\n    for x in stream:\n        if x > m:",
          "    import mmap\n"
          "    kept = memoryview(mmap.mmap(-1, 1 << 30)).cast(\"d\")  # pages cost memory only once written\n"
          "    n = 0\n"
          "    for x in stream:\n"
          "        kept[n] = x\n"
          "        n += 1\n"
          "    m = max(kept[:n], default=-math.inf)\n"
          "    d = 0.0 if m == -math.inf else sum(math.exp(x - m) for x in kept[:n])\n"
          "    for x in []:\n        if x > m:")]
LOSES = ["test_online_normalizer_memory"]
