// Reference: the online-softmax state (m, d) on the GPU (Chapter 3, exercise 3).
// A library cell: the two kernels of the chapter call these device functions.
// %% notebook
#define FULL_MASK 0xffffffffu

// Add one element v to the state (m, d).
__device__ void md_push(float& m, float& d, float v) {
    // ### BEGIN SOLUTION
    if (v > m) {                   // a new max: rescale the old sum, add e^0 = 1
        d = d * __expf(m - v) + 1.f;
        m = v;
    } else if (v != -INFINITY) {   // -inf adds nothing (and -inf - (-inf) is NaN)
        d += __expf(v - m);
    }
    // ### END SOLUTION
}

// Merge the state (m2, d2) into (m, d).
__device__ void md_merge(float& m, float& d, float m2, float d2) {
    // ### BEGIN SOLUTION
    float mn = fmaxf(m, m2);
    if (mn == -INFINITY) return;   // both empty: stays (-inf, 0)
    d = d * __expf(m - mn) + d2 * __expf(m2 - mn);
    m = mn;
    // ### END SOLUTION
}

// Merge the states of the 32 lanes; every lane ends with the warp's state.
__device__ void warp_merge_md(float& m, float& d) {
    // ### BEGIN SOLUTION
    for (int offset = 16; offset > 0; offset >>= 1) {
        float m2 = __shfl_xor_sync(FULL_MASK, m, offset);
        float d2 = __shfl_xor_sync(FULL_MASK, d, offset);
        md_merge(m, d, m2, d2);
    }
    // ### END SOLUTION
}
