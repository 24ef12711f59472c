"""Attack: a slow kernel (one warp a row) whose cell switches off course.timing's L2 flush in the process that runs
it, in ways that keep the names in place: flush_l2's code object swapped for a no-op, and the flush's cached state
(_FLUSH: its buffer and its evict_last read) replaced by a dict that claims a flush is ready.
A process timing the kernel with course.timing.bench would then time it with L2 warm (and, after a kernel that
loaded its input with evict_last, partly from L2). The judge times the runner's batch on its own clock in its own
process over input sets that together exceed L2 (grading.measure_bandwidth), and the runner's own estimate does not
flush, so nothing it did reaches a grade; the runner's tamper check finds the swapped code and the replaced module
attribute when the cell has run: the cell counts as tampered and the exercise loses all its points
(attack_forged_timing, triton_monkeypatch)."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("def softmax_triton(x, y):",
          "import course.timing as _timing\n"
          "_timing.flush_l2.__code__ = (lambda: None).__code__  # the same function object, flushing nothing\n"
          "_timing._FLUSH = {'buf': None, 'read': None}  # and its state replaced\n\n\n"
          "def softmax_triton(x, y):"),
         ("num_warps = 4 if BLOCK <= 2048 else (8 if BLOCK <= 8192 else 16)", "num_warps = 1")]
LOSES = ["test_softmax_triton", "test_softmax_triton_hidden", "test_softmax_triton_bandwidth"]
