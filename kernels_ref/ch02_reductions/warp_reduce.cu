// Reference: warp reductions (Chapter 2, exercise 1).
// Butterfly with __shfl_xor_sync: after 5 steps every lane holds the warp's result.
// %% notebook
#define FULL_MASK 0xffffffffu

// Sum of v over the 32 lanes of the warp; every lane returns the sum.
__device__ float warp_reduce_sum(float v) {
    // ### BEGIN SOLUTION
    for (int offset = 16; offset > 0; offset >>= 1)  // lane i pairs with lane i ^ offset
        v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
    // ### END SOLUTION
}

// Max of v over the 32 lanes of the warp; every lane returns the max.
__device__ float warp_reduce_max(float v) {
    // ### BEGIN SOLUTION
    for (int offset = 16; offset > 0; offset >>= 1)
        v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, offset));
    return v;
    // ### END SOLUTION
}
