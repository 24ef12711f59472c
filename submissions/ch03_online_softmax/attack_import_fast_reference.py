"""Attack: import Chapter 3's fast reference (kernels_ref/ch03_online_softmax/softmax_split_rows.py, which hands long
rows on Hopper to the CUDA cluster kernel, softmax_cluster.cu) instead of writing the
Triton kernel. It sits beside the grader; the runner must not be able to import it."""
EXERCISE = "ch03.online_softmax_triton"
CELL = "online_softmax_triton"
PATCH = [("    online_softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=BLOCK, num_warps=8)",
          "    pass\n\n\nfrom kernels_ref.ch03_online_softmax.softmax_split_rows import online_softmax_triton  # noqa")]
LOSES = ["test_online_softmax_triton", "test_online_softmax_triton_hidden", "test_online_softmax_triton_bandwidth"]
