"""Correct, but one 2-byte load per thread at a time, and the row read twice (no 16-byte loads)."""
EXERCISE = "ch05.rmsnorm_vec_cuda"
CELL = "rmsnorm_vec_cuda"
PATCH = [("""    const uint4* x8 = reinterpret_cast<const uint4*>(x + (size_t)blockIdx.x * cols);""",
          """    const __nv_bfloat16* xr = x + (size_t)blockIdx.x * cols;
    __nv_bfloat16* yr = y + (size_t)blockIdx.x * cols;
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float f = __bfloat162float(xr[c]);
        s += f * f;
    }
    float r = rsqrtf(block_sum(s, smem) / cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = __float2bfloat16_rn(__bfloat162float(xr[c]) * r * __bfloat162float(gamma[c]));
    if (cols >= 0) return;
    const uint4* x8 = reinterpret_cast<const uint4*>(x + (size_t)blockIdx.x * cols);""")]
LOSES = ["test_rmsnorm_vec_cuda_bandwidth"]
