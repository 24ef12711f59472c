"""Correct but slow: two passes over 1024-wide tiles (sum of squares, then write), so x is read twice. Added
as a legitimate variant; on an NVIDIA H100 (2026-11-23, judge's clock) it ran at 67% of copy against the
72% bar, so it is a known-slow submission: it loses only the bandwidth cell. On an NVIDIA H200 (2026-11-29,
archived run gpu_2026-11-29_s24/f) it ran at 72.7% (the second read of each row mostly from L2), which passed that
bar: the bar is now 0.75 (thresholds.toml)."""
EXERCISE = "ch05.rmsnorm_triton"
CELL = "rmsnorm_triton"
PATCH = [("""    c = tl.arange(0, BLOCK)
    mask = c < cols
    x = tl.load(x_ptr + row * x_stride + c, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(g_ptr + c, mask=mask, other=0.0).to(tl.float32)  # issued now: it arrives during the reduction
    rstd = tl.rsqrt(tl.sum(x * x, 0) / cols + eps)
    tl.store(y_ptr + row * y_stride + c, (x * rstd * g).to(y_ptr.dtype.element_ty), mask=mask)  # one rounding
""", """    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        c = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * x_stride + c, mask=c < cols, other=0.0).to(tl.float32)
        acc += x * x
    rstd = tl.rsqrt(tl.sum(acc, 0) / cols + eps)
    for start in range(0, cols, BLOCK):
        c = start + tl.arange(0, BLOCK)
        mask = c < cols
        x = tl.load(x_ptr + row * x_stride + c, mask=mask, other=0.0).to(tl.float32)
        g = tl.load(g_ptr + c, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * y_stride + c, (x * rstd * g).to(y_ptr.dtype.element_ty), mask=mask)
"""), ("    BLOCK = triton.next_power_of_2(cols)\n    warps = min(16, max(1, BLOCK // 512))\n",
       "    BLOCK = min(triton.next_power_of_2(cols), 1024)\n    warps = min(16, max(1, BLOCK // 512))\n")]
LOSES = ["test_rmsnorm_triton_bandwidth"]
