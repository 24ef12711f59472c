// Reference: online softmax, one warp per row (Chapter 3, exercise 4). Uses md_ops (exercise 3).
// Launched with 256 threads per block: warp w of block b owns row 8b + w.
// Rows up to 2048 floats stay in registers (16 float4 per lane): 1 read + 1 write.
// Longer rows take two passes: one for (m, d), one to write (2 reads + 1 write).
// Inside a lane whose values are all in registers, max-then-sum beats a chain of rescalings;
// the lanes' states are still merged online, with shuffles.
// %% notebook
#define VEC_PER_LANE 16  // float4 registers per lane: rows up to 32 * 16 * 4 = 2048 floats

extern "C" __global__ void online_softmax_warp(const float* __restrict__ x, float* __restrict__ y,
                                               int rows, int cols) {
    // ### BEGIN SOLUTION
    int lane = threadIdx.x & 31;
    int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;  // the whole warp leaves together
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    float m = -INFINITY, d = 0.f;
    if ((cols & 3) == 0 && cols <= 128 * VEC_PER_LANE) {  // rows start 16-byte aligned
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        float4* y4 = reinterpret_cast<float4*>(yr);
        int n4 = cols / 4;
        float4 v[VEC_PER_LANE];  // the lane's share of the row, in registers
        #pragma unroll
        for (int k = 0; k < VEC_PER_LANE; ++k) {  // all loads in flight at once
            int c = lane + 32 * k;
            v[k] = c < n4 ? x4[c] : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
        }
        // The lane's values are all here: its max, then its sum, with no chain of rescalings.
        #pragma unroll
        for (int k = 0; k < VEC_PER_LANE; ++k) m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
        if (m != -INFINITY) {  // a lane with no data keeps the empty state (-inf, 0)
            #pragma unroll
            for (int k = 0; k < VEC_PER_LANE; ++k)
                d += (__expf(v[k].x - m) + __expf(v[k].y - m)) + (__expf(v[k].z - m) + __expf(v[k].w - m));
        }
        warp_merge_md(m, d);
        float inv = 1.f / d;
        #pragma unroll
        for (int k = 0; k < VEC_PER_LANE; ++k) {
            int c = lane + 32 * k;
            if (c < n4)
                y4[c] = make_float4(__expf(v[k].x - m) * inv, __expf(v[k].y - m) * inv,
                                    __expf(v[k].z - m) * inv, __expf(v[k].w - m) * inv);
        }
    } else if ((cols & 3) == 0) {  // long rows: one pass for (m, d), one to write
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        float4* y4 = reinterpret_cast<float4*>(yr);
        #pragma unroll 4
        for (int c = lane; c < cols / 4; c += 32) {
            float4 v = x4[c];
            md_push(m, d, v.x); md_push(m, d, v.y); md_push(m, d, v.z); md_push(m, d, v.w);
        }
        warp_merge_md(m, d);
        float inv = 1.f / d;
        #pragma unroll 4
        for (int c = lane; c < cols / 4; c += 32) {
            float4 v = x4[c];
            y4[c] = make_float4(__expf(v.x - m) * inv, __expf(v.y - m) * inv,
                                __expf(v.z - m) * inv, __expf(v.w - m) * inv);
        }
    } else {  // any length, one float at a time
        for (int c = lane; c < cols; c += 32) md_push(m, d, xr[c]);
        warp_merge_md(m, d);
        float inv = 1.f / d;
        for (int c = lane; c < cols; c += 32) yr[c] = __expf(xr[c] - m) * inv;
    }
    // ### END SOLUTION
}
