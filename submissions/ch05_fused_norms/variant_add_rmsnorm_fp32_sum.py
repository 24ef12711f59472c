"""Legitimate variant: normalise the float32 sum x + residual (not the rounded residual_out it stores).

Chapter 5 allows either choice; the check compares y with the norm of each (see _add_verify)."""
EXERCISE = "ch05.add_rmsnorm_triton"
CELL = "add_rmsnorm_triton"
PATCH = [('''    h = (x + r).to(h_ptr.dtype.element_ty)
    tl.store(h_ptr + row * cols + c, h, mask=mask)
    h = h.to(tl.float32)  # normalise the stored sum: y = RMSNorm(residual_out), exactly
''', '''    h = x + r  # float32: the unrounded sum is normalised
    tl.store(h_ptr + row * cols + c, h.to(h_ptr.dtype.element_ty), mask=mask)
''')]
LOSES = []
