// Reference, fast path: LayerNorm for narrow rows (Chapter 5, exercise 1; issue 15). Not a notebook cell: the
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
// Variants, off by default (the defaults below compile to the kernel described above, byte for byte), for
// benchmarks/norms_cuda_sweep.py to time on the H200, where this kernel read 96.3% of copy at 65536 x 1024 against
// Liger-Kernel's 97.9 and torch.compile's 98.1 (report run benchmarks/gpu_2026-11-27_s11/n): LNR_PERSIST 1, warps
// that loop over rows (right on any grid; meant for a few blocks per SM), loading the next row (LNR_PREFETCH float4
// a lane of it) before normalising the current one, gamma and beta in registers (LNR_GB_REGS 1) or from L1 each
// row; LNR_ROWS_PER_WARP 2, two rows of up to 1024 floats a warp, both in flight; LNR_MIN_BLOCKS (with
// LNR_MAX_THREADS), __launch_bounds__ for the register budget; LNR_WARP_VEC 8, rows over 1024 floats to the block
// path (fewer registers). Registers and spills of each combination timed: at the sweep's LN_VARIANTS.
// %% notebook
#ifndef LNR_WARP_VEC
#define LNR_WARP_VEC 16  // float4 per lane on the warp path: rows up to 32 * 16 * 4 = 2048 floats
#endif
#ifndef LNR_BLOCK_VEC
#define LNR_BLOCK_VEC 8  // float4 per thread on the block path: rows up to 256 * 8 * 4 = 8192 floats
#endif
#ifndef LNR_GB_FIRST
#define LNR_GB_FIRST 0  // 1: the block path loads gamma and beta with x, before the reductions (as Liger-Kernel does)
#endif
// Variants for benchmarks/norms_cuda_sweep.py (see the header); with every default the kernel is as it was.
#ifndef LNR_PERSIST
#define LNR_PERSIST 0        // 1: persistent warps on the warp path, for any grid (the sweep: a few blocks per SM)
#endif
#ifndef LNR_PREFETCH
#define LNR_PREFETCH 8       // LNR_PERSIST, rows of <= 1024 floats: float4 per lane of the next row loaded before
#endif                       // the current row is normalised (8: all of it; 4: half; 0: none)
#ifndef LNR_GB_REGS
#define LNR_GB_REGS 1        // LNR_PERSIST, rows of <= 1024 floats: gamma and beta in registers, loaded once
#endif
#ifndef LNR_ROWS_PER_WARP
#define LNR_ROWS_PER_WARP 1  // without LNR_PERSIST: 2 = two rows of <= 1024 floats a warp, 16 rows a block
#endif
#ifndef LNR_MAX_THREADS
#define LNR_MAX_THREADS 256  // with LNR_MIN_BLOCKS (undefined by default): __launch_bounds__(this, LNR_MIN_BLOCKS)
#endif

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

__device__ void lnr_block_row(const float* __restrict__ xr, const float* __restrict__ gamma,
                              const float* __restrict__ beta, float* __restrict__ yr, int cols, bool vec,
                              float eps) {
    __shared__ float part[2][32];
    int t = threadIdx.x, nt = blockDim.x, n4 = cols / 4;
    vec = vec && n4 <= nt * LNR_BLOCK_VEC;
    float4 v[LNR_BLOCK_VEC];
#if LNR_GB_FIRST
    float4 gv[LNR_BLOCK_VEC], bv[LNR_BLOCK_VEC];
#endif
    float s = 0.f;
    if (vec) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        #pragma unroll
        for (int k = 0; k < LNR_BLOCK_VEC; ++k) {
            int c = t + k * nt;
            v[k] = c < n4 ? x4[c] : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#if LNR_GB_FIRST
        #pragma unroll
        for (int k = 0; k < LNR_BLOCK_VEC; ++k) {
            int c = t + k * nt;
            gv[k] = c < n4 ? reinterpret_cast<const float4*>(gamma)[c] : make_float4(0.f, 0.f, 0.f, 0.f);
            bv[k] = c < n4 ? reinterpret_cast<const float4*>(beta)[c] : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#endif
        #pragma unroll
        for (int k = 0; k < LNR_BLOCK_VEC; ++k) s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    } else {
        for (int c = t; c < cols; c += nt) s += xr[c];
    }
    float mean = lnr_block_sum(s, part[0]) / cols;
    float m2 = 0.f;
    if (vec) {
        #pragma unroll
        for (int k = 0; k < LNR_BLOCK_VEC; ++k) {
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
#if !LNR_GB_FIRST
        const float4* g4 = reinterpret_cast<const float4*>(gamma);
        const float4* b4 = reinterpret_cast<const float4*>(beta);
#endif
        float4* y4 = reinterpret_cast<float4*>(yr);
        #pragma unroll
        for (int k = 0; k < LNR_BLOCK_VEC; ++k) {
            int c = t + k * nt;
#if LNR_GB_FIRST
            if (c < n4) y4[c] = lnr_norm4(v[k], gv[k], bv[k], mean, rstd);
#else
            if (c < n4) y4[c] = lnr_norm4(v[k], g4[c], b4[c], mean, rstd);
#endif
        }
    } else {
        for (int c = t; c < cols; c += nt) yr[c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
    }
}

#if LNR_PERSIST || LNR_ROWS_PER_WARP == 2
// Read-only loads (ld.global.nc, LDG.E.128.CONSTANT: what the compiler picks by itself for the kernel above, and for
// lnr_warp_rows2, but not inside the persistent loop)
#ifdef __CUDA_ARCH__
#define LNR_LDG(p) __ldg(p)
#else
#define LNR_LDG(p) (*(p))  // the course's CPU execution layer
#endif
template <bool NC = false>
__device__ __forceinline__ float4 lnr_load4(const float4* __restrict__ p, int c, int n4) {
    if constexpr (NC) return c < n4 ? LNR_LDG(p + c) : make_float4(0.f, 0.f, 0.f, 0.f);
    return c < n4 ? p[c] : make_float4(0.f, 0.f, 0.f, 0.f);
}

__device__ __forceinline__ float lnr_sum4(float4 v) { return (v.x + v.y) + (v.z + v.w); }

__device__ __forceinline__ float lnr_dev4(float4 v, float mean) {
    float a = v.x - mean, b = v.y - mean, c = v.z - mean, d = v.w - mean;
    return (a * a + b * b) + (c * c + d * d);
}
#endif

#if LNR_PERSIST
// Float4 k of a row held as lo[0 .. P) (loaded ahead, during the previous row) and hi[0 .. V - P) (the rest).
template <int P, int NL, int NH>
__device__ __forceinline__ float4 lnr_at(const float4 (&lo)[NL], const float4 (&hi)[NH], int k) {
    return k < P ? lo[k < P ? k : 0] : hi[k < P ? 0 : k - P];  // k is a constant once unrolled: no copy
}

// Normalise and store one row of VEC float4 per lane (the same two passes as lnr_warp_row).
template <int V, int P, bool GREG, int NL, int NH, int NG>
__device__ __forceinline__ void lnr_finish(const float4 (&lo)[NL], const float4 (&hi)[NH], const float4 (&gr)[NG],
                                           const float4 (&br)[NG], const float4* __restrict__ g4,
                                           const float4* __restrict__ b4, float4* __restrict__ y4, int n4,
                                           int cols, float eps, int lane) {
    float s = 0.f;
    #pragma unroll
    for (int k = 0; k < V; ++k) s += lnr_sum4(lnr_at<P>(lo, hi, k));  // zeros past the row add nothing
    float mean = lnr_warp_sum(s) / cols;
    float m2 = 0.f;
    #pragma unroll
    for (int k = 0; k < V; ++k)
        if (lane + 32 * k < n4) m2 += lnr_dev4(lnr_at<P>(lo, hi, k), mean);
    float rstd = rsqrtf(lnr_warp_sum(m2) / cols + eps);
    int zero = 0;  // gamma and beta from L1 each row: an offset opaque to the compiler keeps their loads in the loop
#ifdef __CUDA_ARCH__
    if constexpr (!GREG) asm volatile("" : "+r"(zero));
#endif
    #pragma unroll
    for (int k = 0; k < V; ++k) {
        int c = lane + 32 * k;
        if (c < n4) {
            float4 g, b;
            if constexpr (GREG) { g = gr[k]; b = br[k]; }
            else { g = LNR_LDG(g4 + zero + c); b = LNR_LDG(b4 + zero + c); }
            y4[c] = lnr_norm4(lnr_at<P>(lo, hi, k), g, b, mean, rstd);
        }
    }
}

// A persistent warp: rows row, row + stride, ... below `rows` (row < rows on entry; every bound warp-uniform, so
// every shuffle has its 32 lanes). Before a row is normalised, the first P float4 per lane of the warp's next row
// are loaded into the other of two buffers (lo0 / lo1, alternately: no register copy waits on a load), the rest
// of it (hi) once the row is stored; a row past `rows` is never loaded. GREG: gamma and beta in registers.
template <int V, int P, bool GREG>
__device__ __forceinline__ void lnr_persist_rows(const float* __restrict__ x, const float4* __restrict__ g4,
                                                 const float4* __restrict__ b4, float* __restrict__ y, size_t row,
                                                 size_t stride, size_t rows, int n4, int cols, float eps,
                                                 int lane) {
    constexpr int NL = P > 0 ? P : 1, NH = V - P > 0 ? V - P : 1, NG = GREG ? V : 1;
    float4 gr[NG], br[NG];
    if constexpr (GREG) {
        #pragma unroll
        for (int k = 0; k < V; ++k) {
            gr[k] = lnr_load4<true>(g4, lane + 32 * k, n4);
            br[k] = lnr_load4<true>(b4, lane + 32 * k, n4);
        }
    }
    float4 lo0[NL], lo1[NL], hi[NH];
    const float4* x4 = reinterpret_cast<const float4*>(x + row * cols);
    #pragma unroll
    for (int k = 0; k < P; ++k) lo0[k] = lnr_load4<true>(x4, lane + 32 * k, n4);
    #pragma unroll
    for (int k = 0; k < V - P; ++k) hi[k] = lnr_load4<true>(x4, lane + 32 * (P + k), n4);
    for (;;) {
        size_t next = row + stride;
        if (next < rows) {
            x4 = reinterpret_cast<const float4*>(x + next * cols);
            #pragma unroll
            for (int k = 0; k < P; ++k) lo1[k] = lnr_load4<true>(x4, lane + 32 * k, n4);
        }
        lnr_finish<V, P, GREG>(lo0, hi, gr, br, g4, b4, reinterpret_cast<float4*>(y + row * cols), n4, cols, eps,
                               lane);
        if (next >= rows) return;
        row = next;
        #pragma unroll
        for (int k = 0; k < V - P; ++k) hi[k] = lnr_load4<true>(x4, lane + 32 * (P + k), n4);
        next = row + stride;
        if (next < rows) {
            x4 = reinterpret_cast<const float4*>(x + next * cols);
            #pragma unroll
            for (int k = 0; k < P; ++k) lo0[k] = lnr_load4<true>(x4, lane + 32 * k, n4);
        }
        lnr_finish<V, P, GREG>(lo1, hi, gr, br, g4, b4, reinterpret_cast<float4*>(y + row * cols), n4, cols, eps,
                               lane);
        if (next >= rows) return;
        row = next;
        #pragma unroll
        for (int k = 0; k < V - P; ++k) hi[k] = lnr_load4<true>(x4, lane + 32 * (P + k), n4);
    }
}
#endif

#if LNR_ROWS_PER_WARP == 2
// Two rows a warp (the second only where `two`): both rows' loads in flight at once, their reductions interleaved.
template <int VEC>
__device__ __forceinline__ void lnr_warp_rows2(const float4* __restrict__ x0, const float4* __restrict__ x1,
                                               const float4* __restrict__ g4, const float4* __restrict__ b4,
                                               float4* __restrict__ y0, float4* __restrict__ y1, bool two, int n4,
                                               int cols, float eps, int lane) {
    float4 v0[VEC], v1[VEC];
    #pragma unroll
    for (int k = 0; k < VEC; ++k) v0[k] = lnr_load4(x0, lane + 32 * k, n4);
    #pragma unroll
    for (int k = 0; k < VEC; ++k) v1[k] = lnr_load4(x1, lane + 32 * k, two ? n4 : 0);  // no row: zeros
    float s0 = 0.f, s1 = 0.f;
    #pragma unroll
    for (int k = 0; k < VEC; ++k) { s0 += lnr_sum4(v0[k]); s1 += lnr_sum4(v1[k]); }
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        s0 += __shfl_xor_sync(0xffffffffu, s0, o);
        s1 += __shfl_xor_sync(0xffffffffu, s1, o);
    }
    float mean0 = s0 / cols, mean1 = s1 / cols, m0 = 0.f, m1 = 0.f;
    #pragma unroll
    for (int k = 0; k < VEC; ++k) {
        if (lane + 32 * k < n4) { m0 += lnr_dev4(v0[k], mean0); m1 += lnr_dev4(v1[k], mean1); }
    }
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        m0 += __shfl_xor_sync(0xffffffffu, m0, o);
        m1 += __shfl_xor_sync(0xffffffffu, m1, o);
    }
    float rstd0 = rsqrtf(m0 / cols + eps), rstd1 = rsqrtf(m1 / cols + eps);
    #pragma unroll
    for (int k = 0; k < VEC; ++k) {
        int c = lane + 32 * k;
        if (c < n4) {
            float4 g = g4[c], b = b4[c];
            y0[c] = lnr_norm4(v0[k], g, b, mean0, rstd0);
            if (two) y1[c] = lnr_norm4(v1[k], g, b, mean1, rstd1);
        }
    }
}
#endif

#ifdef LNR_MIN_BLOCKS
extern "C" __global__ void __launch_bounds__(LNR_MAX_THREADS, LNR_MIN_BLOCKS)
layernorm_welford(const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
                  float* __restrict__ y, int rows, int cols, float eps)
#else
extern "C" __global__ void layernorm_welford(const float* __restrict__ x, const float* __restrict__ gamma,
                                             const float* __restrict__ beta, float* __restrict__ y,
                                             int rows, int cols, float eps)
#endif
{
    // float4 access needs cols % 4 == 0 and every base 16-byte aligned (then every row start is too)
    bool vec = (cols & 3) == 0 &&
               (((unsigned long long)x | (unsigned long long)gamma | (unsigned long long)beta |
                 (unsigned long long)y) & 15) == 0;
    if (!(vec && cols <= 32 * LNR_WARP_VEC * 4)) {  // uniform over the grid: no block mixes the two paths
#if LNR_PERSIST  // a block per row as below, on any grid: rows blockIdx.x, + gridDim.x, ...
        for (size_t row = blockIdx.x; row < (size_t)rows; row += gridDim.x)
            lnr_block_row(x + row * cols, gamma, beta, y + row * cols, cols, vec, eps);
#else
        size_t row = blockIdx.x;
        if (row < (size_t)rows) lnr_block_row(x + row * cols, gamma, beta, y + row * cols, cols, vec, eps);
#endif
        return;
    }
    int warps = blockDim.x >> 5, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
#if LNR_PERSIST
    // Warp w of block b takes rows b * warps + w + k * gridDim.x * warps (k = 0, 1, ...): right on any grid (the
    // exercise's, one block per row: warps past the last row return at once; a block per 8 rows: a row a warp).
    size_t row = (size_t)blockIdx.x * warps + warp, stride = (size_t)gridDim.x * warps;
    if (row >= (size_t)rows) return;  // the whole warp
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    const float4* b4 = reinterpret_cast<const float4*>(beta);
    int n4 = cols / 4;
    // V1 float4 a lane: up to 1024 floats (LNR_WARP_VEC 8 leaves wider rows to the block path, fewer registers)
    constexpr int V1 = LNR_WARP_VEC < 8 ? LNR_WARP_VEC : 8, P1 = LNR_PREFETCH < V1 ? LNR_PREFETCH : V1;
    if (n4 <= 32 * V1)  // the next row's loads in flight while this one is normalised
        lnr_persist_rows<V1, P1, (bool)LNR_GB_REGS>(x, g4, b4, y, row, stride, rows, n4, cols, eps, lane);
#if LNR_WARP_VEC > 8
    else  // up to 2048 floats: a row at a time, gamma and beta from L1 (registers would not fit)
        lnr_persist_rows<LNR_WARP_VEC, 0, false>(x, g4, b4, y, row, stride, rows, n4, cols, eps, lane);
#endif
#elif LNR_ROWS_PER_WARP == 2
    // two rows a warp up to 1024 floats (V2 float4 a lane each); wider ones (LNR_WARP_VEC 16) one row a warp
    constexpr int V2 = LNR_WARP_VEC < 8 ? LNR_WARP_VEC : 8;
    int n4 = cols / 4, per = n4 <= 32 * V2 ? 2 : 1;  // rows a warp takes (uniform over the grid)
    size_t group = (size_t)warps * per, first;
    if (gridDim.x >= (unsigned)rows) {  // one block per row: block 16g takes rows 16g .. 16g+15 (8g .. 8g+7)
        if (blockIdx.x % group) return;
        first = blockIdx.x;
    } else {
        first = (size_t)blockIdx.x * group;  // a launch of ceil(rows / group) blocks (or more: the rest return)
    }
    size_t row = first + (size_t)warp * per;
    if (row >= (size_t)rows) return;  // the whole warp
    const float4* x4 = reinterpret_cast<const float4*>(x + row * cols);
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    const float4* b4 = reinterpret_cast<const float4*>(beta);
    float4* y4 = reinterpret_cast<float4*>(y + row * cols);
    if (per == 2)
        lnr_warp_rows2<V2>(x4, x4 + n4, g4, b4, y4, y4 + n4, row + 1 < (size_t)rows, n4, cols, eps, lane);
#if LNR_WARP_VEC > 8
    else
        lnr_warp_row<LNR_WARP_VEC>(x4, g4, b4, y4, n4, cols, eps, lane);
#endif
#else
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
#endif
}
