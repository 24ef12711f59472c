// Reference: online softmax, one warp per row (Chapter 3, exercise 4). Uses md_ops (exercise 3).
// Launched with 256 threads per block: warp w of block b owns row 8b + w.
// One pass for (m, d), one pass to write: 2 reads + 1 write, the second read mostly from cache.
// %% notebook
extern "C" __global__ void online_softmax_warp(const float* __restrict__ x, float* __restrict__ y,
                                               int rows, int cols) {
    // ### BEGIN SOLUTION
    int lane = threadIdx.x & 31;
    int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;  // the whole warp leaves together
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    float m = -INFINITY, d = 0.f;
    if ((cols & 3) == 0) {  // rows start 16-byte aligned: 4 floats per load
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        #pragma unroll 4  // several loads in flight per thread
        for (int c = lane; c < cols / 4; c += 32) {
            float4 v = x4[c];
            md_push(m, d, v.x); md_push(m, d, v.y); md_push(m, d, v.z); md_push(m, d, v.w);
        }
        warp_merge_md(m, d);
        float inv = 1.f / d;
        float4* y4 = reinterpret_cast<float4*>(yr);
        #pragma unroll 4
        for (int c = lane; c < cols / 4; c += 32) {
            float4 v = x4[c];
            y4[c] = make_float4(__expf(v.x - m) * inv, __expf(v.y - m) * inv,
                                __expf(v.z - m) * inv, __expf(v.w - m) * inv);
        }
    } else {
        for (int c = lane; c < cols; c += 32) md_push(m, d, xr[c]);
        warp_merge_md(m, d);
        float inv = 1.f / d;
        for (int c = lane; c < cols; c += 32) yr[c] = __expf(xr[c] - m) * inv;
    }
    // ### END SOLUTION
}
