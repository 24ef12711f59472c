"""Apex-style: rounds x * rstd to the output dtype, then multiplies by gamma and rounds again."""
EXERCISE = "ch05.rmsnorm_triton"
CELL = "rmsnorm_triton"
PATCH = [("""    tl.store(y_ptr + row * y_stride + c, (x * rstd * g).to(y_ptr.dtype.element_ty), mask=mask)  # one rounding
""", """    g = g.to(y_ptr.dtype.element_ty)
    tl.store(y_ptr + row * y_stride + c, (x * rstd).to(y_ptr.dtype.element_ty) * g, mask=mask)  # rounds twice
""")]
LOSES = ["test_rmsnorm_triton", "test_rmsnorm_triton_hidden", "test_rmsnorm_triton_bandwidth"]
