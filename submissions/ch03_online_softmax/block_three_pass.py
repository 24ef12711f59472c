"""Correct but 3-pass: max, then sum, then write, each reading the 512 KiB row from memory again."""
EXERCISE = "ch03.online_softmax_block"
CELL = "online_softmax_block"
PATCH = [("""    float m = -INFINITY, d = 0.f;
    if (vec) {
        #pragma unroll 4  // several loads in flight per thread
        for (int c = threadIdx.x; c < cols / 4; c += blockDim.x) {
            float4 v = x4[c];
            md_push(m, d, v.x); md_push(m, d, v.y); md_push(m, d, v.z); md_push(m, d, v.w);
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += blockDim.x) md_push(m, d, xr[c]);
    }
""", """    float m = -INFINITY, d = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);  // pass 1: max
    warp_merge_md(m, d);
    if (lane == 0) sm[warp] = m;
    __syncthreads();
    m = sm[0];
    for (int w = 1; w < warps; ++w) m = fmaxf(m, sm[w]);
    __syncthreads();
    for (int c = threadIdx.x; c < cols; c += blockDim.x) d += __expf(xr[c] - m);  // pass 2: sum
""")]
LOSES = ["test_online_softmax_block_bandwidth"]
