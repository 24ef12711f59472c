"""Attack: import the instructor's reference solution instead of writing one (it sits beside the grader)."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("    softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=BLOCK, num_warps=num_warps)",
          "    pass\n\n\nfrom kernels_ref.ch01_softmax.softmax_triton import softmax_triton  # noqa")]
LOSES = ["test_softmax_triton", "test_softmax_triton_hidden", "test_softmax_triton_bandwidth"]
