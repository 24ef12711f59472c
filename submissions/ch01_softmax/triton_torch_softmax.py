"""Calls torch.softmax inside the wrapper instead of launching the kernel."""
EXERCISE = "ch01.softmax_triton"
CELL = "softmax_triton"
PATCH = [("    softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=BLOCK, num_warps=num_warps)",
          "    y.copy_(torch.softmax(x, dim=-1))")]
LOSES = ["test_softmax_triton", "test_softmax_triton_hidden", "test_softmax_triton_bandwidth"]
