// Softmax over long rows, x read once: a row is split over the CLUSTER thread blocks of one thread-block cluster
// (Hopper, sm_90), each block holds its part of the row in registers, and the blocks exchange their partial
// (max, sum) through distributed shared memory: each block writes its pair into every block's shared memory.
//
//   block r of a cluster, row = blockIdx.x / CLUSTER:  part r = columns [r P, (r + 1) P), P = THREADS VEC EPV
//     1. load the part (VEC 16-byte vectors a thread, all issued before any is used), keep it in registers
//     2. m_r = max of the part, d_r = sum 2^((x - m_r) log2 e)          (block reductions, no global memory)
//     3. write (m_r, d_r) into slot r of every block of the cluster      (st.shared::cluster after mapa)
//        cluster barrier (arrive.release / wait.acquire): every block now holds all CLUSTER pairs
//     4. M = max m_k, D = sum d_k 2^((m_k - M) log2 e); y = 2^((x - M) log2 e) / D from the registers, stored once
//
// Global memory traffic is one read of x and one write of y, as a copy's. Compile-time parameters (#define before
// this file, set by softmax_cluster.py): SC_BF16 (1: bfloat16 in and out, 0: float32), CLUSTER (blocks a row, 8 at
// most portably, 16 with the driver's non-portable attribute), THREADS (a block), VEC (16-byte vectors a thread);
// SC_ONE_EXP, SC_LD, SC_ST and SC_PROBE are options and timing probes, below. Columns must be a multiple
// of EPV (elements per 16-byte vector) and the rows 16-byte aligned: the host checks, and takes another kernel
// otherwise. A part past the row's end (or a masked tail) holds -inf: it contributes (m, d) = (-inf, 0) and drops
// out of the merge (d = 0). A row of all -inf gives NaN, as torch.softmax does, and so does a row with a NaN (its
// part's d is NaN, even where that part's other values are all -inf).
#include <cuda_bf16.h>

#if SC_BF16
typedef __nv_bfloat16 sc_t;
#define EPV 8
#else
typedef float sc_t;
#define EPV 4
#endif
#ifndef SC_PROBE  // timing probes (wrong results; benchmarks/softmax_cluster_sweep.py): 1 no exchange, 2 no
#define SC_PROBE 0  // arithmetic (a copy staged through registers), 3 neither
#endif
#ifndef SC_ONE_EXP  // float32 only: keep 2^(x - m_r) in place of x (one exponential an element instead of two)
#define SC_ONE_EXP 0
#endif
// bfloat16 with t in an array of float32 beside x lost: 86.8-87.2% against 96.4 (H100, archived run
// gpu_2026-11-27_s12/b)
#if SC_ONE_EXP && SC_BF16
#error "SC_ONE_EXP keeps float32 values in place of x: float32 only"
#endif
#ifndef SC_FAST  // fewer instructions an element, for the H200 where the arithmetic is what costs (see sc_exp):
#define SC_FAST 0  // ex2.approx.ftz; bfloat16: the exponent by one FMA, maxima on pairs, 1 / D folded into the exponent
#endif
#define SC_LOG2E 1.4426950408889634f
#define SC_NEG_INF __int_as_float(0xff800000)

// 2^a on the special-function unit alone (MUFU.EX2): exp2f adds a compare and two multiplies to return the results
// below 2^-126 that this flushes to 0 (below every tolerance here)
__device__ __forceinline__ float sc_ex2(float a) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
    return r;
}

// 2^((x - m) log2 e), where mL = m log2 e. SC_FAST: sc_ex2 and, where FMA (bfloat16, |m| < SC_FMA_MAX), the exponent
// by one FMA, x log2 e - mL, as FlashAttention does. That FMA loses up to half an ulp of mL in the exponent: 6.8e-4
// relative at |m| = 2^14 (4.2e-5 at |m| = 1000), inside bfloat16's tolerance (1e-2) but not float32's (1e-4), so
// float32 keeps the exact difference (the FMA form failed a 2e-6 test on an H100, archived run gpu_2026-11-27_s12/b),
// and so does a bfloat16 block whose maximum is larger (m log2 e overflows float32 past 2.4e38, which bfloat16
// reaches). Else exp2f.
#define SC_FMA_MAX 16384.f
template <bool FMA>
__device__ __forceinline__ float sc_exp(float x, float m, float mL) {
#if SC_FAST
    return sc_ex2(FMA ? fmaf(x, SC_LOG2E, -mL) : (x - m) * SC_LOG2E);
#else
    return exp2f((x - m) * SC_LOG2E);
#endif
}

// the i-th of the vector's EPV values as float
__device__ __forceinline__ float sc_get(const uint4& v, int i) {
    const unsigned w = (&v.x)[SC_BF16 ? i / 2 : i];
#if SC_BF16
    return __uint_as_float((i & 1) ? (w & 0xffff0000u) : (w << 16));
#else
    return __uint_as_float(w);
#endif
}

// The cache hints. Streaming (.cs, "evict first") looked right, x being read once and y never read back, and cost
// 2.8 (float32) and 4.5 (bfloat16) points of copy on an H100 (archived run gpu_2026-11-27_s11/k): softmax_cluster.py
// asks for none (SC_LD 2, SC_ST 1).
#ifndef SC_LD  // the load's cache hint: 0 streaming (.cs: x is read once), 1 read-only without L1 allocation, 2 none
#define SC_LD 2
#endif
#ifndef SC_ST  // the store's: 0 streaming (.cs: y is not read back), 1 none
#define SC_ST 1
#endif
#if SC_LD == 0
#define SC_LD_OP "ld.global.cs.v4.u32"
#elif SC_LD == 1
#define SC_LD_OP "ld.global.nc.L1::no_allocate.v4.u32"
#else
#define SC_LD_OP "ld.global.v4.u32"
#endif

__device__ __forceinline__ uint4 sc_load(const sc_t* p) {
    uint4 v;
    asm volatile(SC_LD_OP " {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

__device__ __forceinline__ void sc_store(sc_t* p, const float* f) {  // EPV floats, rounded once
    uint4 v;
#if SC_BF16
    for (int i = 0; i < 4; ++i) {
        __nv_bfloat162 h = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
        (&v.x)[i] = *reinterpret_cast<unsigned*>(&h);
    }
#else
    for (int i = 0; i < 4; ++i) (&v.x)[i] = __float_as_uint(f[i]);
#endif
#if SC_ST == 0
    asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
#else
    asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
#endif
}

// a block-wide reduction (max if IS_MAX, else sum) through `red` (THREADS / 32 floats); every thread gets it
template <bool IS_MAX>
__device__ __forceinline__ float sc_block_reduce(float v, float* red) {
    for (int o = 16; o > 0; o >>= 1) {
        const float u = __shfl_xor_sync(0xffffffffu, v, o);
        v = IS_MAX ? fmaxf(v, u) : v + u;
    }
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    v = red[0];
    for (int w = 1; w < THREADS / 32; ++w) v = IS_MAX ? fmaxf(v, red[w]) : v + red[w];
    return v;
}

// The sum pass over a thread's VEC vectors: sum of 2^((x - m) log2 e) (FMA: the FMA exponent, see sc_exp); float32
// SC_ONE_EXP keeps each 2^((x - m) log2 e) in place of x.
template <bool FMA>
__device__ __forceinline__ float sc_sum_pass(uint4 (&v)[VEC], float m, float mL) {
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < VEC; ++i)
#pragma unroll
        for (int e = 0; e < EPV; ++e) {
#if SC_FAST && SC_BF16  // the same values as sc_get, by another instruction (PRMT): ptxas would otherwise keep the
            // unpacked floats of this pass for the last one (220 registers instead of 128 at 16 vectors, s12)
            const float x = __uint_as_float(__byte_perm((&v[i].x)[e / 2], 0u, (e & 1) ? 0x3244 : 0x1044));
#else
            const float x = sc_get(v[i], e);
#endif
            const float t = sc_exp<FMA>(x, m, mL);
#if SC_ONE_EXP
            (&v[i].x)[e] = __float_as_uint(t);  // float32: 2^(x - m_r) replaces x, and y is t times a scale
#endif
            s += t;
        }
    return s;
}

// The last pass: y from the registers, stored once. bb: the row's maximum M (0 if it is -inf), inv = 1 / D; FMA
// (SC_FAST bfloat16, |M| < SC_FMA_MAX): y = 2^(x log2 e - shiftL), shiftL = M log2 e + log2 D; SC_ONE_EXP: t x scale.
template <bool FMA>
__device__ __forceinline__ void sc_out_pass(const uint4 (&v)[VEC], sc_t* yr, int c0, int cols, float bb, float inv,
                                            float shiftL, float scale) {
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        const int c = c0 + i * THREADS * EPV;
        if (c < cols) {
            float f[EPV];
#pragma unroll
            for (int e = 0; e < EPV; ++e)
#if SC_PROBE & 2
                f[e] = sc_get(v[i], e);
#elif SC_ONE_EXP
                f[e] = sc_get(v[i], e) * scale;  // 2^(x - m_r) 2^(m_r - M) / D: one exponential an element
#elif SC_FAST && SC_BF16
                f[e] = FMA ? sc_ex2(fmaf(sc_get(v[i], e), SC_LOG2E, -shiftL))
                           : sc_ex2((sc_get(v[i], e) - bb) * SC_LOG2E) * inv;
#else
                f[e] = exp2f((sc_get(v[i], e) - bb) * SC_LOG2E) * inv;
#endif
            sc_store(yr + c, f);
        }
    }
}

#ifdef SC_MIN_BLOCKS  // blocks an SM the register allocation must allow (a sweep option; even 1 changes ptxas' choices)
#define SC_MIN_ARG , SC_MIN_BLOCKS
#else
#define SC_MIN_ARG
#endif
extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS SC_MIN_ARG)
softmax_cluster(const sc_t* __restrict__ x, sc_t* __restrict__ y, int rows, int cols) {
    __shared__ float red_max[THREADS / 32], red_sum[THREADS / 32];
    __shared__ float2 parts[CLUSTER];
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    // Arrive now, wait just before writing into the other blocks: a block's shared memory may be written only once
    // the block runs, and the wait then costs nothing (the part is loaded and reduced meanwhile).
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");

    const long long row = blockIdx.x / CLUSTER;  // < rows: the grid is rows x CLUSTER blocks
    const sc_t* xr = x + row * cols;
    sc_t* yr = y + row * cols;
    const int c0 = rank * (THREADS * VEC * EPV) + threadIdx.x * EPV;

    uint4 v[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i) {  // every load issued before any value is used: VEC x 16 bytes in flight a thread
        const int c = c0 + i * THREADS * EPV;
        if (c < cols) {
            v[i] = sc_load(xr + c);
        } else {
#if SC_BF16
            v[i] = make_uint4(0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u);  // -inf in both halves
#else
            v[i] = make_uint4(0xff800000u, 0xff800000u, 0xff800000u, 0xff800000u);
#endif
        }
    }

#if SC_PROBE & 2  // timing probe: no arithmetic (y = x, a copy staged through registers)
    float m = 0.f, d = 1.f;
    const float mb = 0.f;
#else
#if SC_FAST && SC_BF16  // maxima of bfloat16 pairs (max.bf16x2: one instruction for two values, no conversion)
    unsigned m2 = 0xff80ff80u;  // -inf in both halves; like fmaxf, max.bf16x2 returns the other value for a NaN
#pragma unroll
    for (int i = 0; i < VEC; ++i)
#pragma unroll
        for (int w = 0; w < 4; ++w) asm("max.bf16x2 %0, %0, %1;" : "+r"(m2) : "r"((&v[i].x)[w]));
    float m = fmaxf(__uint_as_float(m2 << 16), __uint_as_float(m2 & 0xffff0000u));
#else
    float m = SC_NEG_INF;
#pragma unroll
    for (int i = 0; i < VEC; ++i)
#pragma unroll
        for (int e = 0; e < EPV; ++e) m = fmaxf(m, sc_get(v[i], e));
#endif
    m = sc_block_reduce<true>(m, red_max);
    const float mb = m == SC_NEG_INF ? 0.f : m;  // nothing finite in the part: no (-inf) - (-inf)
    const float mbL = mb * SC_LOG2E;
#if SC_FAST && SC_BF16  // the FMA exponent where |m_r| < SC_FMA_MAX, decided once for the block (both loops compiled)
    float d = fabsf(mb) < SC_FMA_MAX ? sc_sum_pass<true>(v, mb, mbL) : sc_sum_pass<false>(v, mb, mbL);
#else
    float d = sc_sum_pass<false>(v, mb, mbL);
#endif
    d = sc_block_reduce<false>(d, red_sum);
#endif

    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");  // every block of the cluster has started
#if SC_PROBE & 1  // timing probe: no exchange (each block normalises by its own part: a wrong y)
    const float bb = mb, big_d = d, inv = 1.f / d;
#else
    if (threadIdx.x < CLUSTER) {  // thread k writes this block's pair into block k's slot `rank`
        unsigned local = static_cast<unsigned>(__cvta_generic_to_shared(&parts[rank])), remote;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(threadIdx.x));
        asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};" :: "r"(remote), "f"(m), "f"(d) : "memory");
    }
    // release: this block's writes before the barrier; acquire: every block's writes into ours are seen after it.
    // No block touches another's shared memory after this barrier, so each may exit when it is done.
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");

    float big_m = SC_NEG_INF;
#pragma unroll
    for (int k = 0; k < CLUSTER; ++k) big_m = fmaxf(big_m, parts[k].x);
    const float bb = big_m == SC_NEG_INF ? 0.f : big_m;
    float big_d = 0.f;
#pragma unroll
    for (int k = 0; k < CLUSTER; ++k)
        if (parts[k].y != 0.f) big_d += parts[k].y * exp2f((parts[k].x - bb) * SC_LOG2E);  // a NaN d counts
    const float inv = 1.f / big_d;  // a row of all -inf: 1 / 0 = inf, and inf x 2^(-inf) = NaN, as torch
#endif
    (void)big_d;  // each is unused in some configurations
    (void)inv;
#if SC_ONE_EXP
    const float scale = exp2f((m - bb) * SC_LOG2E) * inv;  // a part of all -inf: 2^(-inf) = 0 (its t are 0 too)
#elif SC_FAST && SC_BF16 && !(SC_PROBE & 2)
    // y = 2^(x log2 e - (M log2 e + log2 D)): the division folded into the exponent (lg2.approx: an absolute error
    // below 2^-22 in the exponent; M log2 e and the sum each rounded once: two half ulps of up to 23655, 2^-10 each).
    // A row of all -inf: D = 0, log2 D = -inf, -inf x log2 e + inf = NaN, as torch.
    float lg_d;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(lg_d) : "f"(big_d));
    const float shiftL = bb * SC_LOG2E + lg_d;
#endif

#if SC_FAST && SC_BF16 && !(SC_PROBE & 2)
    if (fabsf(bb) < SC_FMA_MAX)  // the row's maximum: the same for every block of the cluster
        sc_out_pass<true>(v, yr, c0, cols, bb, inv, shiftL, 0.f);
    else
        sc_out_pass<false>(v, yr, c0, cols, bb, inv, shiftL, 0.f);
#elif SC_ONE_EXP
    sc_out_pass<false>(v, yr, c0, cols, bb, inv, 0.f, scale);
#else
    sc_out_pass<false>(v, yr, c0, cols, bb, inv, 0.f, 0.f);
#endif
}
