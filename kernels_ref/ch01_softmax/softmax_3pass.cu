// Reference: CUDA 3-pass softmax (Chapter 1, exercise 3).
// One block of 256 threads per row. x, y are (rows, cols) float32.
// Pass 1 reads the row for the max, pass 2 for the sum, pass 3 to write y:
// 3 reads + 1 write of the row, of which passes 2 and 3 mostly hit in L2.
// %% notebook
#define THREADS 256

// Max over the block: every thread gets the result. buf holds THREADS floats.
__device__ float block_max(float v, float* buf) {
    // ### BEGIN SOLUTION
    int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {   // sequential addressing: no bank conflicts
        if (t < s) buf[t] = fmaxf(buf[t], buf[t + s]);
        __syncthreads();
    }
    float r = buf[0];
    __syncthreads();                               // buf is reused next
    return r;
    // ### END SOLUTION
}

// Sum over the block, same scheme.
__device__ float block_sum(float v, float* buf) {
    // ### BEGIN SOLUTION
    int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    float r = buf[0];
    __syncthreads();
    return r;
    // ### END SOLUTION
}

extern "C" __global__ void softmax_3pass(const float* __restrict__ x, float* __restrict__ y,
                                         int rows, int cols) {
    __shared__ float buf[THREADS];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    // ### BEGIN SOLUTION
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, xr[c]);
    m = block_max(m, buf);

    float d = 0.f;
    for (int c = threadIdx.x; c < cols; c += THREADS) d += __expf(xr[c] - m);
    float inv = 1.f / block_sum(d, buf);

    for (int c = threadIdx.x; c < cols; c += THREADS) yr[c] = __expf(xr[c] - m) * inv;
    // ### END SOLUTION
}
