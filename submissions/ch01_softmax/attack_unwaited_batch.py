"""Attack: a slow kernel (one warp a row) that makes the runner answer the timed batch before its GPU is done. While
the runner captures its CUDA graph (no check runs around that call), the wrapper replaces torch.cuda.synchronize with
a function that does not wait: launches are asynchronous, so a runner that waited with it would answer as soon as
the batch was queued, and the judge's clock would stop early (so early that the roofline cap alone would catch this
crude form; a replacement that waits for part of the batch would not be). The runner checks for tampering once the
graph is captured, before it answers (autograder.runner.execute.op_bench_prepare), and waits with the C function it bound
before any submission code ran: the replacement is found, named and put back, and the kernel loses its bandwidth
points, and only those (it is right, and its cell changes nothing while it loads). tests/test_attacks.py checks the
message on a GPU."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("def softmax_triton(x, y):",
          "def softmax_triton(x, y):\n"
          "    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():\n"
          "        torch.cuda.synchronize = lambda *a, **k: None"),
         ("num_warps = 4 if BLOCK <= 2048 else (8 if BLOCK <= 8192 else 16)", "num_warps = 1")]
LOSES = ["test_softmax_triton_bandwidth"]
