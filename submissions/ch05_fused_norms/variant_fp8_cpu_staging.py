"""Legitimate variant: Exercise 5 as its text tells a student to write the CPU-mode workaround: on a CPU tensor the
kernel stores into a float32 buffer (torch.empty) and the wrapper converts it with q.copy_; int32 row offsets,
num_warps by Chapter 1's rule of thumb, scale clamped after the division by 448."""
EXERCISE = "ch05.swiglu_rmsnorm_fp8_triton"
CELL = "swiglu_rmsnorm_fp8_triton"
PATCH = [('''    row = tl.program_id(0).to(tl.int64)
''', '''    row = tl.program_id(0)
'''), ('''    scale = tl.maximum(tl.max(tl.abs(y), 0), 1e-12) / 448.0  # a row of zeros: no 0/0
''', '''    scale = tl.maximum(tl.max(tl.abs(y), 0) / 448.0, 1e-12 / 448.0)  # a row of zeros: no 0/0
'''), ('''    warps = min(16, max(1, BLOCK // 512))
    out = q if gate.is_cuda else q.new_empty(q.shape, dtype=scale.dtype)  # CPU: the interpreter's e4m3
    swiglu_rmsnorm_fp8_kernel[(rows,)](gate, up, residual, gamma, out, scale, cols, eps,  # cast is wrong,
                                       BLOCK=BLOCK, num_warps=warps)                       # so stage fp32
    if out is not q:
        q.copy_(out)  # PyTorch's float32 -> e4m3 conversion (round to nearest even)
''', '''    if cols <= 2048:
        warps = 4
    elif cols <= 8192:
        warps = 8
    else:
        warps = 16
    if q.is_cuda:
        out = q
    else:  # CPU mode: the interpreter's float32 -> e4m3 cast is wrong; store float32, let PyTorch convert
        out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    swiglu_rmsnorm_fp8_kernel[(rows,)](gate, up, residual, gamma, out, scale, cols, eps,
                                       BLOCK=BLOCK, num_warps=warps)
    if not q.is_cuda:
        q.copy_(out)
''')]
LOSES = []
