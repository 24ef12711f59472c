// Reference, fast path: RMSNorm with 16-byte loads for narrow rows (Chapter 5, exercise 3). Not a
// notebook cell: the notebook's solution is rmsnorm_vec.cu (one block per row), which this file replaces in
// benchmarks (kernels_ref/bench.py, FAST_REFERENCES). Same contract, same launch: grid (rows,), 256 threads,
// bf16 in and out, float32 inside, the output rounded once.
//
// Why: a memory-bound kernel is as fast as the bytes it keeps in flight per SM. A version of this file that
// gave each warp one row used 85 registers (sized for its 2048-value path): 2 blocks of 256 threads per SM,
// and a 1024-value bf16 row is only 2 KiB (4 uint4 per lane), so at most 2 x 8 x 2 KiB = 32 KiB in flight per
// SM: 67.5% of copy on an H100 at 65536 x 1024, where layernorm_rows.cu (fp32: a 1024-value row is 4 KiB, also
// 2 blocks per SM) reached 97.5%. Here a warp loads up to 8 uint4 per lane (4 KiB) at once: one row of up to
// 2048 values (or, with RMSR_MAX_ROWS 2, two rows of up to 1024 values, normalised one after the other, so only
// one row's float32 copies are live at a time); and __launch_bounds__(256, 3) caps the registers at 80 so 3
// blocks (24 warps) share an SM: up to 3 x 8 x 4 KiB = 96 KiB in flight.
// ptxas (nvcc 13.0, -arch=sm_90, measured without a GPU): 80 registers, 0 bytes stack, no spills; every load
// and store of x and y an LDG.E.128 / STG.E.128 (cuobjdump -sass). Timed on H100s: archived runs gpu_2026-11-26_s7
// and gpu_2026-11-26_s9/g (norms_sweep.json), and the benchmark report.
//
// The warp path: each row's sum of squares reduced with shuffles; no shared memory, no barrier. The launch is
// the exercise's (one block per row), so the first block of each group of 8 rows (8 warps x 1 row; 16 rows with
// RMSR_MAX_ROWS 2 and rows of up to 1024 values) takes the group's rows and the others return at once; a launch
// of one block per group also works (block b then takes group b; the surplus blocks return).
// Wider rows take a block per row (uint4 registers up to 8192 values); rows that cannot be read as uint4
// (cols % 8 != 0 or a base not 16-byte aligned, outside the contract) a block per row with scalar loads.
// benchmarks/norms_cuda_sweep.py times variants by defining RMSR_WARP_VEC, RMSR_MAX_ROWS or RMSR_MIN_BLOCKS
// before the source.
// %% notebook
#include <cuda_bf16.h>

#ifndef RMSR_WARP_VEC
#define RMSR_WARP_VEC 8   // uint4 per lane on the warp path (4 KiB per warp): rows up to 32 * 8 * 8 = 2048 values
#endif
#ifndef RMSR_MAX_ROWS
#define RMSR_MAX_ROWS 1   // rows per warp where they fit (2: two rows of up to 1024 values, 4 uint4 per lane each).
#endif                    // 1 measured faster on the grid of groups (H100, archived run gpu_2026-11-26_s9/g): 65536 x
                          // 1024 95.3% of copy against 94.3% for 2; 65536 x 1536 96.6 / 96.4; 32768 x 2048 93.0 / 93.2
#ifndef RMSR_MIN_BLOCKS
#define RMSR_MIN_BLOCKS 3 // blocks per SM asked of ptxas (__launch_bounds__): 3 x 256 threads, at most 80 registers
#endif
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

// A warp normalises rows row .. row + ROWS - 1 (those below `rows`), VEC uint4 per lane each.
template <int VEC, int ROWS>
__device__ __forceinline__ void rmsr_warp_rows(const uint4* __restrict__ x8, const uint4* __restrict__ g8,
                                               uint4* __restrict__ y8, size_t row, int rows, int n8, int cols,
                                               float eps) {
    int lane = threadIdx.x & 31;
    uint4 v[ROWS][VEC];
    #pragma unroll
    for (int r = 0; r < ROWS; ++r) {  // every 16-byte load of every row in flight before any arithmetic
        #pragma unroll
        for (int k = 0; k < VEC; ++k) {
            int c = lane + 32 * k;
            v[r][k] = row + r < (size_t)rows && c < n8 ? x8[(row + r) * n8 + c] : make_uint4(0, 0, 0, 0);
        }
    }
    #pragma unroll
    for (int r = 0; r < ROWS; ++r) {  // then one row after the other: its sum, then its stores
        float ss = 0.f;
        #pragma unroll
        for (int k = 0; k < VEC; ++k) ss += rmsr_sumsq8(v[r][k]);  // bf16 zeros add nothing
        float rstd = rsqrtf(rmsr_warp_sum(ss) / cols + eps);  // every lane joins: the row test comes after
        if (row + r >= (size_t)rows) break;
        #pragma unroll
        for (int k = 0; k < VEC; ++k) {
            int c = lane + 32 * k;
            if (c < n8) y8[(row + r) * n8 + c] = rmsr_scale8(v[r][k], g8[c], rstd);
        }
    }
}

// A block normalises one row, VEC uint4 per thread (the row's sum over the block: one barrier).
__device__ __forceinline__ void rmsr_block_row(const uint4* __restrict__ x8, const uint4* __restrict__ g8,
                                               uint4* __restrict__ y8, int n8, int cols, float eps, float* part) {
    int t = threadIdx.x, nt = blockDim.x;
    uint4 v[RMSR_BLOCK_VEC];
    #pragma unroll
    for (int k = 0; k < RMSR_BLOCK_VEC; ++k) {
        int c = t + nt * k;
        v[k] = c < n8 ? x8[c] : make_uint4(0, 0, 0, 0);
    }
    float ss = 0.f;
    #pragma unroll
    for (int k = 0; k < RMSR_BLOCK_VEC; ++k) ss += rmsr_sumsq8(v[k]);
    ss = rmsr_warp_sum(ss);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = ss;  // one slot per warp, one barrier,
    __syncthreads();
    ss = 0.f;
    for (int w = 0; w < (int)(blockDim.x >> 5); ++w) ss += part[w];  // every thread the same sum, same order
    float rstd = rsqrtf(ss / cols + eps);
    #pragma unroll
    for (int k = 0; k < RMSR_BLOCK_VEC; ++k) {
        int c = t + nt * k;
        if (c < n8) y8[c] = rmsr_scale8(v[k], g8[c], rstd);
    }
}

extern "C" __global__ void __launch_bounds__(256, RMSR_MIN_BLOCKS)
rmsnorm_vec(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ gamma,
            __nv_bfloat16* __restrict__ y, int rows, int cols, float eps) {
    __shared__ float part[32];
    bool vec = (cols & 7) == 0 &&
               (((unsigned long long)x | (unsigned long long)gamma | (unsigned long long)y) & 15) == 0;
    int n8 = cols / 8;
    const uint4* x8 = reinterpret_cast<const uint4*>(x);
    const uint4* g8 = reinterpret_cast<const uint4*>(gamma);
    uint4* y8 = reinterpret_cast<uint4*>(y);
    if (!vec || n8 > 32 * RMSR_WARP_VEC) {  // uniform over the grid: a block per row
        size_t row = blockIdx.x;
        if (row >= (size_t)rows) return;
        if (vec && n8 <= (int)blockDim.x * RMSR_BLOCK_VEC) {
            rmsr_block_row(x8 + row * n8, g8, y8 + row * n8, n8, cols, eps, part);
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
    bool two = RMSR_MAX_ROWS >= 2 && n8 <= 32 * RMSR_WARP_VEC / 2;  // two rows per warp (uniform over the grid)
    int warps = blockDim.x >> 5, warp = threadIdx.x >> 5, group = warps * (two ? 2 : 1);
    size_t first;
    if (gridDim.x >= (unsigned)rows) {  // the exercise's launch, one block per row: block 16g takes rows 16g..16g+15
        if (blockIdx.x % group) return;
        first = blockIdx.x;
    } else {
        first = (size_t)blockIdx.x * group;  // a launch of fewer blocks: block b takes group b
    }
    size_t row = first + (size_t)warp * (two ? 2 : 1);
    if (row >= (size_t)rows) return;  // the whole warp: no shuffle loses a lane
    if (two)
        rmsr_warp_rows<RMSR_WARP_VEC / 2, 2>(x8, g8, y8, row, rows, n8, cols, eps);  // 2 rows, up to 1024 values
    else
        rmsr_warp_rows<RMSR_WARP_VEC, 1>(x8, g8, y8, row, rows, n8, cols, eps);  // 1 row, up to 2048 values
}

// The report's launch for rows of at most 1024 values (kernels_ref/report.py; not the exercise's contract): grid
// (ceil(rows / 8),), 256 threads, one row a warp, 4 uint4 per lane. Sized for those rows alone, it needs 48 registers
// (ptxas, nvcc 13.0, sm_90: no spills), so 4 or more blocks (32 warps) share an SM where rmsnorm_vec, sized for 2048
// values, fits 3. At 65536 x 1024 (norms.json, archived run gpu_2026-11-26_s10/a, d, e on an H200, f on an H100): on
// the H200 91.9% of copy (e), and 91.4-91.5% (a, d, e) for rmsnorm_vec compiled with RMSR_WARP_VEC 4, RMSR_MAX_ROWS 1,
// RMSR_MIN_BLOCKS 4 (the same warp path, 64 registers), against 86.8-87.6% for rmsnorm_vec as it is, on the same
// grid; on the H100 95.8% against 95.1-95.3. Needs cols % 8 == 0 and 16-byte aligned x, gamma and y; the caller
// checks.
extern "C" __global__ __launch_bounds__(256, 4) void rmsnorm_narrow(
        const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ gamma, __nv_bfloat16* __restrict__ y,
        int rows, int cols, float eps) {
    size_t row = (size_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= (size_t)rows) return;  // the whole warp
    rmsr_warp_rows<4, 1>(reinterpret_cast<const uint4*>(x), reinterpret_cast<const uint4*>(gamma),
                         reinterpret_cast<uint4*>(y), row, rows, cols / 8, cols, eps);
}
