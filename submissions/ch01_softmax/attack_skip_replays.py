"""Attack: a slow kernel (one warp a row) that makes the timed batch do less work than the judge asked for. While
the runner captures its CUDA graph, the wrapper finds the graph object (gc) and gives it a `replay` attribute of its
own that skips one replay in eight. Every round writes the same outputs, so the skipped rounds leave them right, and
a batch timed at 7/8 of its work reads 8/7 of the kernel's bandwidth: on an H100 the one-warp kernel read 71.9% of
copy against a bar of 74%, and 8/7 of that, 82%, would clear the bar and stay under the roofline cap. The
runner replays with torch._C's own replay, bound before any submission code ran
(autograder.runner.execute.bind_primitives), so the attribute is never called: the kernel is timed as it is and must lose
its bandwidth points, and only those (it is right, and its cell changes nothing while it loads).
tests/test_attacks.py compares its bandwidth with the plain one-warp kernel's on a GPU."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("def softmax_triton(x, y):",
          "import gc as _gc\n\n\n"
          "def _skip_some(graph):\n"
          "    real, calls = type(graph).replay, [0]\n\n"
          "    def replay():\n"
          "        calls[0] += 1\n"
          "        if calls[0] % 8:\n"
          "            real(graph)\n"
          "    graph.replay = replay\n\n\n"
          "def softmax_triton(x, y):\n"
          "    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():\n"
          "        for o in _gc.get_objects():\n"
          "            if isinstance(o, torch.cuda.CUDAGraph) and 'replay' not in vars(o):\n"
          "                _skip_some(o)"),
         ("num_warps = 4 if BLOCK <= 2048 else (8 if BLOCK <= 8192 else 16)", "num_warps = 1")]
LOSES = ["test_softmax_triton_bandwidth"]
