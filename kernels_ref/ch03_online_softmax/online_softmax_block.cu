// Reference: online softmax, one block of 512 threads per row, for long rows (Chapter 3, exercise 5).
// Uses md_ops (exercise 3). Per thread: (m, d) over its columns; level 1 merges a warp with
// shuffles, level 2 merges the 16 warp states through shared memory. 2 reads + 1 write.
// %% notebook
extern "C" __global__ void online_softmax_block(const float* __restrict__ x, float* __restrict__ y,
                                                int rows, int cols) {
    __shared__ float sm[32], sd[32];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    // ### BEGIN SOLUTION
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    bool vec = (cols & 3) == 0;  // rows start 16-byte aligned: 4 floats per load
    const float4* x4 = reinterpret_cast<const float4*>(xr);
    float m = -INFINITY, d = 0.f;
    if (vec) {
        #pragma unroll 4  // several loads in flight per thread
        for (int c = threadIdx.x; c < cols / 4; c += blockDim.x) {
            float4 v = x4[c];
            md_push(m, d, v.x); md_push(m, d, v.y); md_push(m, d, v.z); md_push(m, d, v.w);
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += blockDim.x) md_push(m, d, xr[c]);
    }
    warp_merge_md(m, d);                  // level 1: the warp's state, in every lane
    if (lane == 0) { sm[warp] = m; sd[warp] = d; }
    __syncthreads();
    m = lane < warps ? sm[lane] : -INFINITY;
    d = lane < warps ? sd[lane] : 0.f;
    warp_merge_md(m, d);                  // level 2: every warp merges the warp states
    float inv = 1.f / d;
    if (vec) {
        float4* y4 = reinterpret_cast<float4*>(yr);
        #pragma unroll 4
        for (int c = threadIdx.x; c < cols / 4; c += blockDim.x) {
            float4 v = x4[c];
            y4[c] = make_float4(__expf(v.x - m) * inv, __expf(v.y - m) * inv,
                                __expf(v.z - m) * inv, __expf(v.w - m) * inv);
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = __expf(xr[c] - m) * inv;
    }
    // ### END SOLUTION
}
