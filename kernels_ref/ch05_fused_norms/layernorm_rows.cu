// Reference, fast path: LayerNorm for narrow rows (Chapter 5, exercise 1). Not a notebook cell: the
// notebook's solution is layernorm_welford.cu (one block per row), which this file replaces in benchmarks
// (kernels_ref/bench.py, FAST_REFERENCES). Same contract, same launch: grid (rows,), 256 threads, fp32.
//
// Why: with one 256-thread block per row, a 1024-float row is one float4 per thread, and the kernel's 56
// registers (sized for 8192-float rows) allow 4 blocks per SM: 4 rows (16 KiB) in flight, two block-wide
// barriers each. Here, for rows up to 2048 floats, a warp owns a row: 8 (or 16) float4 per lane loaded at
// once, the mean and then the squared deviations from it summed over registers (two passes, no cancellation)
// and reduced with shuffles; no shared memory, no barrier. The launch is the exercise's (one block per row), so
// the first block of each group of 8 takes the group's 8 rows (one per warp) and the 7 others return at once;
// a launch of ceil(rows / 8) blocks also works (each block then takes rows 8b .. 8b + 7).
// Wider rows, or rows that cannot be read as float4, take a block per row (the register path up to 8192
// floats, else three passes over global memory).
//
// layernorm_narrow, the second kernel (same contract; the report launches it on rows of at most 1024 floats, a
// 128-thread block per row): the block path sized for such a row, 2 float4 a thread, 32 registers (ptxas 13.0), so
// 16 blocks (64 warps, 16 rows) stay on an SM, where layernorm_welford's 96 registers (sized for its 2048-float warp
// path) keep 2 blocks of 8 warps (16 rows). On an H200 at 65536 x 1024 (benchmarks/norms_cuda_sweep.py, archived run
// gpu_2026-11-27_s12/f) it read 97.3% of copy against 95.9 for the warp path on its grid of groups; Liger-Kernel's
// LayerNorm, shaped the same way (a 4-warp program a row), 97.6-97.7 in the placement probe (gpu_2026-11-27_s12/e).
// Lost in the same sweeps (code in git history, commit 3dcc014): persistent warps with the next row prefetched and
// gamma and beta in registers (83.1-91.9%), two rows a warp (94.0-94.1), smaller blocks on the warp path (95.4-95.5),
// more warps an SM on it (94.4-94.7), gamma and beta loaded with x on the narrow block path (91.9).
// %% notebook
#ifndef LNR_WARP_VEC
#define LNR_WARP_VEC 16  // float4 per lane on the warp path: rows up to 32 * 16 * 4 = 2048 floats
#endif
#define LNR_BLOCK_VEC 8  // float4 per thread on the block path: rows up to 256 * 8 * 4 = 8192 floats
#define LNR_NARROW_VEC 2  // float4 per thread in layernorm_narrow: 1024 floats on 128 threads

__device__ __forceinline__ float lnr_warp_sum(float v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float lnr_block_sum(float v, float* part) {  // part: one slot per warp, used once
    v = lnr_warp_sum(v);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    float s = 0.f;
    for (int w = 0; w < (int)(blockDim.x >> 5); ++w) s += part[w];  // every thread, same order: same sum
    return s;
}

__device__ __forceinline__ float4 lnr_norm4(float4 v, float4 g, float4 b, float mean, float rstd) {
    return make_float4((v.x - mean) * rstd * g.x + b.x, (v.y - mean) * rstd * g.y + b.y,
                       (v.z - mean) * rstd * g.z + b.z, (v.w - mean) * rstd * g.w + b.w);
}

template <int VEC>
__device__ __forceinline__ void lnr_warp_row(const float4* __restrict__ x4, const float4* __restrict__ g4,
                                             const float4* __restrict__ b4, float4* __restrict__ y4, int n4,
                                             int cols, float eps, int lane) {
    float4 v[VEC];
    #pragma unroll
    for (int k = 0; k < VEC; ++k) {  // every load in flight before any arithmetic
        int c = lane + 32 * k;
        v[k] = c < n4 ? x4[c] : make_float4(0.f, 0.f, 0.f, 0.f);
    }
    float s = 0.f;
    #pragma unroll
    for (int k = 0; k < VEC; ++k) s += (v[k].x + v[k].y) + (v[k].z + v[k].w);  // zeros past the row add nothing
    float mean = lnr_warp_sum(s) / cols;
    float m2 = 0.f;
    #pragma unroll
    for (int k = 0; k < VEC; ++k) {
        if (lane + 32 * k < n4) {
            float a = v[k].x - mean, b = v[k].y - mean, c = v[k].z - mean, d = v[k].w - mean;
            m2 += (a * a + b * b) + (c * c + d * d);
        }
    }
    float rstd = rsqrtf(lnr_warp_sum(m2) / cols + eps);  // biased variance, as torch's layer_norm
    #pragma unroll
    for (int k = 0; k < VEC; ++k) {
        int c = lane + 32 * k;
        if (c < n4) y4[c] = lnr_norm4(v[k], g4[c], b4[c], mean, rstd);
    }
}

template <int VEC>  // float4 registers a thread: rows up to blockDim.x * VEC * 4 floats from registers
__device__ void lnr_block_row(const float* __restrict__ xr, const float* __restrict__ gamma,
                              const float* __restrict__ beta, float* __restrict__ yr, int cols, bool vec,
                              float eps) {
    __shared__ float part[2][32];
    int t = threadIdx.x, nt = blockDim.x, n4 = cols / 4;
    vec = vec && n4 <= nt * VEC;
    float4 v[VEC];
    float s = 0.f;
    if (vec) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        #pragma unroll
        for (int k = 0; k < VEC; ++k) {
            int c = t + k * nt;
            v[k] = c < n4 ? x4[c] : make_float4(0.f, 0.f, 0.f, 0.f);
        }
        #pragma unroll
        for (int k = 0; k < VEC; ++k) s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    } else {
        for (int c = t; c < cols; c += nt) s += xr[c];
    }
    float mean = lnr_block_sum(s, part[0]) / cols;
    float m2 = 0.f;
    if (vec) {
        #pragma unroll
        for (int k = 0; k < VEC; ++k) {
            if (t + k * nt < n4) {
                float a = v[k].x - mean, b = v[k].y - mean, c = v[k].z - mean, d = v[k].w - mean;
                m2 += (a * a + b * b) + (c * c + d * d);
            }
        }
    } else {
        for (int c = t; c < cols; c += nt) { float d = xr[c] - mean; m2 += d * d; }
    }
    float rstd = rsqrtf(lnr_block_sum(m2, part[1]) / cols + eps);
    if (vec) {
        const float4* g4 = reinterpret_cast<const float4*>(gamma);
        const float4* b4 = reinterpret_cast<const float4*>(beta);
        float4* y4 = reinterpret_cast<float4*>(yr);
        #pragma unroll
        for (int k = 0; k < VEC; ++k) {
            int c = t + k * nt;
            if (c < n4) y4[c] = lnr_norm4(v[k], g4[c], b4[c], mean, rstd);
        }
    } else {
        for (int c = t; c < cols; c += nt) yr[c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
    }
}

// float4 access needs cols % 4 == 0 and every base 16-byte aligned (then every row start is too)
__device__ __forceinline__ bool lnr_vec_ok(const void* x, const void* gamma, const void* beta, const void* y,
                                           int cols) {
    return (cols & 3) == 0 && (((unsigned long long)x | (unsigned long long)gamma | (unsigned long long)beta |
                                (unsigned long long)y) & 15) == 0;
}

extern "C" __global__ void layernorm_welford(const float* __restrict__ x, const float* __restrict__ gamma,
                                             const float* __restrict__ beta, float* __restrict__ y,
                                             int rows, int cols, float eps) {
    bool vec = lnr_vec_ok(x, gamma, beta, y, cols);
    if (!(vec && cols <= 32 * LNR_WARP_VEC * 4)) {  // uniform over the grid: no block mixes the two paths
        size_t row = blockIdx.x;
        if (row < (size_t)rows)
            lnr_block_row<LNR_BLOCK_VEC>(x + row * cols, gamma, beta, y + row * cols, cols, vec, eps);
        return;
    }
    int warps = blockDim.x >> 5, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    size_t first;
    if (gridDim.x >= (unsigned)rows) {  // the exercise's launch, one block per row: block 8g takes rows 8g .. 8g+7
        if (blockIdx.x % warps) return;
        first = blockIdx.x;
    } else {
        first = (size_t)blockIdx.x * warps;  // a launch of ceil(rows / warps) blocks
    }
    size_t row = first + warp;
    if (row >= (size_t)rows) return;  // the whole warp: no shuffle loses a lane
    const float4* x4 = reinterpret_cast<const float4*>(x + row * cols);
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    const float4* b4 = reinterpret_cast<const float4*>(beta);
    float4* y4 = reinterpret_cast<float4*>(y + row * cols);
    int n4 = cols / 4;
    if (n4 <= 32 * LNR_WARP_VEC / 2)
        lnr_warp_row<LNR_WARP_VEC / 2>(x4, g4, b4, y4, n4, cols, eps, lane);  // up to 1024 floats
    else
        lnr_warp_row<LNR_WARP_VEC>(x4, g4, b4, y4, n4, cols, eps, lane);
}

extern "C" __global__ void layernorm_narrow(const float* __restrict__ x, const float* __restrict__ gamma,
                                            const float* __restrict__ beta, float* __restrict__ y,
                                            int rows, int cols, float eps) {
    // grid (rows,), blocks of a multiple of 32 threads up to 1024 (full-warp shuffles, 32 partial sums): float4
    // registers where the row fits blockDim.x * 2 float4 and every base is 16-byte aligned, else the scalar loops
    // (right, slow: the report launches it only where it fits). No loop over rows: with one, 40 registers instead
    // of 32 (12 blocks an SM instead of 16).
    size_t row = blockIdx.x;
    if (row < (size_t)rows)
        lnr_block_row<LNR_NARROW_VEC>(x + row * cols, gamma, beta, y + row * cols, cols,
                                      lnr_vec_ok(x, gamma, beta, y, cols), eps);
}
