// Reference: LayerNorm with Welford's algorithm and a warp merge (Chapter 5, exercise 1).
// One block of 256 threads per row, fp32 in and out. Each thread computes the (n, mean, M2) of its
// values (two passes over registers; Welford's update where the row does not fit), the warp merges
// the 32 states with shuffles (Chan et al.'s formula), warp 0 merges the warps.
// Rows up to 8192 floats (cols a multiple of 4) stay in registers: 1 read + 1 write.
// %% notebook
#define LN_THREADS 256
#define LN_VEC 8  // float4 registers per thread: rows up to 256 * 8 * 4 = 8192 floats

__device__ __forceinline__ void welford_push(float& n, float& mean, float& m2, float x) {
    // ### BEGIN SOLUTION
    n += 1.f;
    float delta = x - mean;
    mean += delta / n;
    m2 += delta * (x - mean);  // old delta times new delta: no cancellation
    // ### END SOLUTION
}

__device__ __forceinline__ void welford_merge(float& n, float& mean, float& m2, float nb, float meanb, float m2b) {
    // ### BEGIN SOLUTION
    float nt = n + nb;
    if (nt == 0.f) return;  // two empty states stay empty (no 0/0)
    float delta = meanb - mean;
    float wb = nb / nt;
    mean += delta * wb;
    m2 += m2b + delta * delta * n * wb;  // Chan et al.: M2a + M2b + delta^2 na nb / n
    n = nt;
    // ### END SOLUTION
}

__device__ __forceinline__ void warp_welford(float& n, float& mean, float& m2) {
    // ### BEGIN SOLUTION
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        float nb = __shfl_xor_sync(0xffffffffu, n, o);
        float meanb = __shfl_xor_sync(0xffffffffu, mean, o);
        float m2b = __shfl_xor_sync(0xffffffffu, m2, o);
        welford_merge(n, mean, m2, nb, meanb, m2b);
    }
    // ### END SOLUTION
}

extern "C" __global__ void layernorm_welford(const float* __restrict__ x, const float* __restrict__ gamma,
                                             const float* __restrict__ beta, float* __restrict__ y,
                                             int rows, int cols, float eps) {
    __shared__ float sn[32], smean[32], sm2[32];
    // ### BEGIN SOLUTION
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float n = 0.f, mean = 0.f, m2 = 0.f;
    bool vec = (cols & 3) == 0 && cols <= LN_THREADS * LN_VEC * 4;
    float4 v[LN_VEC];
    if (vec) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        #pragma unroll
        for (int k = 0; k < LN_VEC; ++k) {  // all loads in flight, then the arithmetic
            int c = threadIdx.x + k * LN_THREADS;
            v[k] = c < cols / 4 ? x4[c] : make_float4(0.f, 0.f, 0.f, 0.f);
        }
        // The thread's values are all in registers: its own (n, mean, M2) by two passes over them
        // (no division per value, no dependency chain); Chan's merge then combines the threads.
        float s = 0.f;
        #pragma unroll
        for (int k = 0; k < LN_VEC; ++k)
            if (threadIdx.x + k * LN_THREADS < cols / 4) { s += (v[k].x + v[k].y) + (v[k].z + v[k].w); n += 4.f; }
        mean = n > 0.f ? s / n : 0.f;
        #pragma unroll
        for (int k = 0; k < LN_VEC; ++k) {
            if (threadIdx.x + k * LN_THREADS < cols / 4) {
                float a = v[k].x - mean, b = v[k].y - mean, c = v[k].z - mean, d = v[k].w - mean;
                m2 += (a * a + b * b) + (c * c + d * d);
            }
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += blockDim.x) welford_push(n, mean, m2, xr[c]);
    }
    warp_welford(n, mean, m2);
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) { sn[warp] = n; smean[warp] = mean; sm2[warp] = m2; }
    __syncthreads();
    if (warp == 0) {  // merge the warps' states; lanes without a warp hold the empty state
        bool has = lane < (int)(blockDim.x >> 5);
        n = has ? sn[lane] : 0.f; mean = has ? smean[lane] : 0.f; m2 = has ? sm2[lane] : 0.f;
        warp_welford(n, mean, m2);
        if (lane == 0) { sn[0] = n; smean[0] = mean; sm2[0] = m2; }
    }
    __syncthreads();
    mean = smean[0];
    float rstd = rsqrtf(sm2[0] / sn[0] + eps);  // biased variance, as torch's layer_norm
    if (vec) {
        const float4* g4 = reinterpret_cast<const float4*>(gamma);
        const float4* b4 = reinterpret_cast<const float4*>(beta);
        float4* y4 = reinterpret_cast<float4*>(yr);
        #pragma unroll
        for (int k = 0; k < LN_VEC; ++k) {
            int c = threadIdx.x + k * LN_THREADS;
            if (c < cols / 4) {
                float4 g = g4[c], b = b4[c];
                y4[c] = make_float4((v[k].x - mean) * rstd * g.x + b.x, (v[k].y - mean) * rstd * g.y + b.y,
                                    (v[k].z - mean) * rstd * g.z + b.z, (v[k].w - mean) * rstd * g.w + b.w);
            }
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
    }
    // ### END SOLUTION
}
