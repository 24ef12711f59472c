// Reference: scalar FlashAttention in CUDA, one query row per warp (Chapter 4, optional exercise 3).
// Launched with 128 threads per block: warp w of block b owns row 4b + w of the (B*H*T, D) view.
// Lane l holds dimensions l, l + 32, ... of the query and of the output accumulator (D = 32, 64
// or 128). Key by key: a warp-wide dot product (shuffles), then the online update of (m, l, acc).
// fp32 throughout. A tiled, tensor-core version is the Triton exercise.
// %% notebook
#define MAX_PER_LANE 4  // D up to 128

extern "C" __global__ void flash_attention_warp(const float* __restrict__ q, const float* __restrict__ k,
                                                const float* __restrict__ v, float* __restrict__ o,
                                                int rows, int T, int D, int causal) {
    // ### BEGIN SOLUTION
    int lane = threadIdx.x & 31;
    int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;  // the whole warp leaves together
    int i = row % T;  // the query's position in its sequence
    const float* kh = k + (size_t)(row - i) * D;  // this (batch, head)'s keys and values
    const float* vh = v + (size_t)(row - i) * D;
    int per = D >> 5;
    float qr[MAX_PER_LANE], acc[MAX_PER_LANE];
    float scale = rsqrtf((float)D);
    #pragma unroll
    for (int t = 0; t < MAX_PER_LANE; ++t) {
        qr[t] = t < per ? q[(size_t)row * D + lane + 32 * t] * scale : 0.f;  // scale once
        acc[t] = 0.f;
    }
    float m = -INFINITY, l = 0.f;
    int end = causal ? i + 1 : T;  // causal: keys 0..i
    for (int j = 0; j < end; ++j) {
        float s = 0.f;
        #pragma unroll
        for (int t = 0; t < MAX_PER_LANE; ++t)
            if (t < per) s += qr[t] * kh[(size_t)j * D + lane + 32 * t];
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);  // all lanes: q.k_j
        float m_new = fmaxf(m, s);
        float alpha = __expf(m - m_new);  // first key: e^(-inf) = 0 (m_new is finite)
        float p = __expf(s - m_new);
        l = l * alpha + p;
        #pragma unroll
        for (int t = 0; t < MAX_PER_LANE; ++t)
            if (t < per) acc[t] = acc[t] * alpha + p * vh[(size_t)j * D + lane + 32 * t];
        m = m_new;
    }
    float inv = 1.f / l;
    #pragma unroll
    for (int t = 0; t < MAX_PER_LANE; ++t)
        if (t < per) o[(size_t)row * D + lane + 32 * t] = acc[t] * inv;
    // ### END SOLUTION
}
