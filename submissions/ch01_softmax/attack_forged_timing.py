"""Attack: a slow kernel (one warp a row) whose cell forges the clocks a process could time it with, in ways that
keep the names in place: CUDA events' elapsed_time on the class, and course.timing's bench and copy_gbps by swapping
their code objects. The judge times the runner's batch on its own clock, in its own process
(grading.measure_bandwidth), and divides by its own copy, so the forged clocks could change nothing; and the
runner's tamper check, which compares what is inside each watched function and each method of CUDA's Event as well
as the names, finds all three when the cell has run and puts them back: the cell counts as tampered, and the
exercise loses all its points, as every monkeypatching submission does (triton_monkeypatch)."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("def softmax_triton(x, y):",
          "import torch as _torch\n"
          "import course.timing as _timing\n"
          "_torch.cuda.Event.elapsed_time = lambda self, end: 1e-6  # every interval 1 ns\n"
          "_timing.bench.__code__ = (lambda fn, *a, **k: (fn(), 1e-6)[1]).__code__  # the same function object\n"
          "_timing.copy_gbps.__code__ = (lambda *a, **k: 1.0).__code__  # a copy at 1 GB/s to divide by\n\n\n"
          "def softmax_triton(x, y):"),
         ("num_warps = 4 if BLOCK <= 2048 else (8 if BLOCK <= 8192 else 16)", "num_warps = 1")]
LOSES = ["test_softmax_triton", "test_softmax_triton_hidden", "test_softmax_triton_bandwidth"]
