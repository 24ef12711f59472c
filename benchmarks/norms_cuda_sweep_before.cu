// The warp-per-row RMSNorm as it was before issue 15's fix (kernels_ref/ch05_fused_norms/rmsnorm_rows.cu at commit
// 8a7f257; 85 registers, 67.5% of copy on an H100 at 65536 x 1024 bf16), kept so benchmarks/norms_cuda_sweep.py can
// time it next to the current one in the same process. Not used by the course or the grader.
//
// Reference, fast path: RMSNorm with 16-byte loads for narrow rows (Chapter 5, exercise 3; issue 15). Not a
// notebook cell: the notebook's solution is rmsnorm_vec.cu (one block per row), which this file replaces in
// benchmarks (kernels_ref/bench.py, FAST_REFERENCES). Same contract, same launch: grid (rows,), 256 threads,
// bf16 in and out, float32 inside, the output rounded once.
//
// For rows up to 2048 values a warp owns a row: up to 8 uint4 (8 bf16 each) per lane loaded at once, the
// sum of squares reduced with shuffles; no shared memory, no barrier. The launch is the exercise's (one block
// per row), so the first block of each group of 8 takes the group's 8 rows (one per warp) and the 7 others
// return at once; a launch of ceil(rows / 8) blocks also works (each block then takes rows 8b .. 8b + 7).
// Wider rows take a block per row (uint4 registers up to 8192 values); rows that cannot be read as uint4
// (cols % 8 != 0 or a base not 16-byte aligned, outside the contract) a block per row with scalar loads.
// %% notebook
#include <cuda_bf16.h>

#define RMSR_WARP_VEC 8   // uint4 per lane on the warp path: rows up to 32 * 8 * 8 = 2048 values
#define RMSR_BLOCK_VEC 4  // uint4 per thread on the block path: rows up to 256 * 4 * 8 = 8192 values

__device__ __forceinline__ float rmsr_warp_sum(float v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float rmsr_sumsq8(uint4 v) {
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
    float s = 0.f;
    #pragma unroll
    for (int i = 0; i < 4; ++i) {
        float2 f = __bfloat1622float2(h[i]);
        s += f.x * f.x + f.y * f.y;
    }
    return s;
}

__device__ __forceinline__ uint4 rmsr_scale8(uint4 v, uint4 g, float rstd) {
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
    const __nv_bfloat162* gh = reinterpret_cast<const __nv_bfloat162*>(&g);
    uint4 out;
    __nv_bfloat162* o = reinterpret_cast<__nv_bfloat162*>(&out);
    #pragma unroll
    for (int i = 0; i < 4; ++i) {
        float2 f = __bfloat1622float2(h[i]), w = __bfloat1622float2(gh[i]);
        o[i] = __floats2bfloat162_rn(f.x * rstd * w.x, f.y * rstd * w.y);  // one rounding
    }
    return out;
}

template <int VEC, bool WARP>
__device__ __forceinline__ void rmsr_row(const uint4* __restrict__ x8, const uint4* __restrict__ g8,
                                         uint4* __restrict__ y8, int n8, int cols, float eps, float* part) {
    int t = WARP ? (threadIdx.x & 31) : threadIdx.x, nt = WARP ? 32 : blockDim.x;
    uint4 v[VEC];
    #pragma unroll
    for (int k = 0; k < VEC; ++k) {  // every 16-byte load in flight before any arithmetic
        int c = t + nt * k;
        v[k] = c < n8 ? x8[c] : make_uint4(0, 0, 0, 0);  // bf16 zeros add nothing
    }
    float ss = 0.f;
    #pragma unroll
    for (int k = 0; k < VEC; ++k) ss += rmsr_sumsq8(v[k]);
    ss = rmsr_warp_sum(ss);
    if (!WARP) {  // the block's warps: one slot each, one barrier, every thread adds the slots in the same order
        if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = ss;
        __syncthreads();
        ss = 0.f;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) ss += part[w];
    }
    float rstd = rsqrtf(ss / cols + eps);
    #pragma unroll
    for (int k = 0; k < VEC; ++k) {
        int c = t + nt * k;
        if (c < n8) y8[c] = rmsr_scale8(v[k], g8[c], rstd);
    }
}

extern "C" __global__ void rmsnorm_vec(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ gamma,
                                       __nv_bfloat16* __restrict__ y, int rows, int cols, float eps) {
    __shared__ float part[32];
    bool vec = (cols & 7) == 0 &&
               (((unsigned long long)x | (unsigned long long)gamma | (unsigned long long)y) & 15) == 0;
    int n8 = cols / 8;
    if (!vec || n8 > 32 * RMSR_WARP_VEC) {  // uniform over the grid: a block per row
        size_t row = blockIdx.x;
        if (row >= (size_t)rows) return;
        if (vec && n8 <= (int)blockDim.x * RMSR_BLOCK_VEC) {
            rmsr_row<RMSR_BLOCK_VEC, false>(reinterpret_cast<const uint4*>(x + row * cols),
                                            reinterpret_cast<const uint4*>(gamma),
                                            reinterpret_cast<uint4*>(y + row * cols), n8, cols, eps, part);
            return;
        }
        const __nv_bfloat16* xr = x + row * cols;  // scalar loads: two passes over the row
        float ss = 0.f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) { float f = __bfloat162float(xr[c]); ss += f * f; }
        ss = rmsr_warp_sum(ss);
        if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = ss;
        __syncthreads();
        ss = 0.f;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) ss += part[w];
        float rstd = rsqrtf(ss / cols + eps);
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            y[row * cols + c] = __float2bfloat16_rn(__bfloat162float(xr[c]) * rstd * __bfloat162float(gamma[c]));
        return;
    }
    int warps = blockDim.x >> 5, warp = threadIdx.x >> 5;
    size_t first;
    if (gridDim.x >= (unsigned)rows) {  // the exercise's launch, one block per row: block 8g takes rows 8g .. 8g+7
        if (blockIdx.x % warps) return;
        first = blockIdx.x;
    } else {
        first = (size_t)blockIdx.x * warps;  // a launch of ceil(rows / warps) blocks
    }
    size_t row = first + warp;
    if (row >= (size_t)rows) return;  // the whole warp: no shuffle loses a lane
    const uint4* x8 = reinterpret_cast<const uint4*>(x + row * cols);
    const uint4* g8 = reinterpret_cast<const uint4*>(gamma);
    uint4* y8 = reinterpret_cast<uint4*>(y + row * cols);
    if (n8 <= 32 * RMSR_WARP_VEC / 2)
        rmsr_row<RMSR_WARP_VEC / 2, true>(x8, g8, y8, n8, cols, eps, part);  // up to 1024 values
    else
        rmsr_row<RMSR_WARP_VEC, true>(x8, g8, y8, n8, cols, eps, part);
}
