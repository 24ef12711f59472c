// Reference: two-level block reduction (Chapter 2, exercise 2). Uses warp_reduce_sum (exercise 1).
// Level 1: each warp reduces with shuffles. Level 2: the warp sums meet in shared memory and
// every warp reduces them again, so all threads get the result without a third step.
// %% notebook
// Sum of v over the whole block; every thread returns it.
// blockDim.x is a multiple of 32 (at most 1024); smem holds 32 floats, reusable on return.
__device__ float block_reduce_sum(float v, float* smem) {
    // ### BEGIN SOLUTION
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = warp_reduce_sum(v);               // level 1: the warp's sum, in every lane
    if (lane == 0) smem[warp] = v;
    __syncthreads();                      // every warp's sum is in smem
    v = lane < warps ? smem[lane] : 0.f;  // level 2: each warp reduces the warp sums
    v = warp_reduce_sum(v);
    __syncthreads();                      // all reads of smem done: the caller may reuse it
    return v;
    // ### END SOLUTION
}
