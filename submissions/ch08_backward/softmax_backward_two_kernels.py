"""Correct but slow: the row sums in a first kernel, written to memory, and dx in a second that reads y and dy again,
five element-trips instead of three (the two reads of the first pass are repeated): it loses the bandwidth check."""
EXERCISE = "ch08.softmax_backward_triton"
CELL = "softmax_backward_triton"
PATCH = [("def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, cols, y_stride, dy_stride, dx_stride, BLOCK: tl.constexpr):",
          "def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, cols, y_stride, dy_stride, dx_stride, BLOCK: tl.constexpr,\n"
          "                            dot_ptr, FIRST: tl.constexpr):"),
         ("    dot = tl.sum(y * dy, 0)  # masked lanes hold y = 0: they add nothing\n"
          "    tl.store(dx_ptr + row * dx_stride + c, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=mask)\n",
          "    if FIRST:\n"
          "        tl.store(dot_ptr + row, tl.sum(y * dy, 0))\n"
          "    else:\n"
          "        dot = tl.load(dot_ptr + row)\n"
          "        tl.store(dx_ptr + row * dx_stride + c, (y * (dy - dot)).to(dx_ptr.dtype.element_ty), mask=mask)\n"),
         ("    softmax_backward_kernel[(rows,)](y, dy, dx, cols, y.stride(0), dy.stride(0), dx.stride(0),\n"
          "                                     BLOCK=BLOCK, num_warps=warps)\n",
          "    import torch\n"
          "    dot = torch.empty(rows, device=y.device, dtype=torch.float32)\n"
          "    for first in (True, False):\n"
          "        softmax_backward_kernel[(rows,)](y, dy, dx, cols, y.stride(0), dy.stride(0), dx.stride(0),\n"
          "                                         BLOCK=BLOCK, dot_ptr=dot, FIRST=first, num_warps=warps)\n")]
LOSES = ["test_softmax_backward_triton_bandwidth"]
