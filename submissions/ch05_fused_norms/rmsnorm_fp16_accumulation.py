"""Squares and sums in float16: x² of a row of values near 300 overflows 65504 (inf), so rstd = 0."""
EXERCISE = "ch05.rmsnorm_triton"
CELL = "rmsnorm_triton"
PATCH = [("x = tl.load(x_ptr + row * x_stride + c, mask=mask, other=0.0).to(tl.float32)",
          "x = tl.load(x_ptr + row * x_stride + c, mask=mask, other=0.0).to(tl.float16)")]
LOSES = ["test_rmsnorm_triton", "test_rmsnorm_triton_hidden", "test_rmsnorm_triton_bandwidth"]
