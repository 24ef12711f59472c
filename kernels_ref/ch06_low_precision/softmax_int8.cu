// Reference: integer (fixed-point) softmax in CUDA (Chapter 6, exercise 2). No floating point.
// One block of 256 threads per row; x and y are (rows, cols) int8, cols <= 4096.
// Pass 1: the row max (int). Pass 2: the Q12.19 sum of e^z (64-bit). Then every thread computes the
// same reciprocal (a few dozen integer operations), and pass 3 writes the outputs.
// %% notebook
#define THREADS 256
#define ACCUM_BITS 12
#define ONE_Q31 (1LL << 31)

// e^(-1/4), e^(-1/2), e^(-1), e^(-2), e^(-4), e^(-8), e^(-16) in Q0.31: the factor for bit 24 + j of R
__constant__ long long EXP_NEG_QUARTERS[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
__constant__ long long TAYLOR_Q31[5] = {ONE_Q31, ONE_Q31, 1073741824, 357913941, 89478485};  // 1/0! .. 1/4!
#define NEWTON_A 1515870810LL   // 48/17 in Q2.29
#define NEWTON_B 1010580540LL   // 32/17 in Q2.29

// v / 2^n rounded to nearest (ties up), n >= 1; >> of a negative value is arithmetic (floor).
__device__ long long rshift_round(long long v, int n) { return (v + (1LL << (n - 1))) >> n; }
// a · b for b in Q0.31: the result keeps a's format.
__device__ long long mul_q31(long long a, long long b) { return rshift_round(a * b, 31); }

// e^z in Q0.31 for z <= 0 in Q5.26: 2^31 - 1 where z = 0, 0 where z < -2^31.
__device__ long long exp_neg_q31(long long z) {
    // ### BEGIN SOLUTION
    if (z == 0) return ONE_Q31 - 1;
    if (z < -ONE_Q31) return 0;
    long long r = (z & ((1 << 24) - 1)) - (1 << 24);   // [-1/4, 0) in Q5.26
    long long big = r - z;                               // multiple of 1/4 in [0, 32)
    long long r31 = r * 32;                              // Q0.31
    long long h = TAYLOR_Q31[4];
    for (int c = 3; c >= 0; --c) h = TAYLOR_Q31[c] + mul_q31(r31, h);
    for (int j = 0; j < 7; ++j)
        if ((big >> (24 + j)) & 1) h = mul_q31(h, EXP_NEG_QUARTERS[j]);
    return h;
    // ### END SOLUTION
}

// Max over the block: every thread gets the result. buf holds THREADS ints.
__device__ int block_max(int v, int* buf) {
    // ### BEGIN SOLUTION
    int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] = max(buf[t], buf[t + s]);
        __syncthreads();
    }
    int r = buf[0];
    __syncthreads();
    return r;
    // ### END SOLUTION
}

// Sum over the block, 64-bit. buf holds THREADS long longs.
__device__ long long block_sum(long long v, long long* buf) {
    // ### BEGIN SOLUTION
    int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    long long r = buf[0];
    __syncthreads();
    return r;
    // ### END SOLUTION
}

extern "C" __global__ void softmax_int8_cuda(const signed char* __restrict__ x, signed char* __restrict__ y,
                                             int rows, int cols, int multiplier, int shift) {
    __shared__ int ibuf[THREADS];
    __shared__ long long lbuf[THREADS];
    const signed char* xr = x + (size_t)blockIdx.x * cols;
    signed char* yr = y + (size_t)blockIdx.x * cols;
    // ### BEGIN SOLUTION
    int m = -128;
    for (int c = threadIdx.x; c < cols; c += THREADS) m = max(m, (int)xr[c]);
    m = block_max(m, ibuf);

    long long s = 0;
    for (int c = threadIdx.x; c < cols; c += THREADS) {
        long long z = rshift_round((long long)(xr[c] - m) * multiplier, 31 - shift);
        s += rshift_round(exp_neg_q31(z), ACCUM_BITS);
    }
    s = block_sum(s, lbuf);

    int k = 0;                                   // bit length of s
    while ((s >> k) != 0) ++k;
    long long d = (s << 31) >> k;                // the text's u = s / 2^k in [1/2, 1), Q0.31
    long long inv = NEWTON_A - mul_q31(d, NEWTON_B);
    for (int it = 0; it < 3; ++it) inv = rshift_round(inv * ((2LL << 29) - mul_q31(d, inv)), 29);

    for (int c = threadIdx.x; c < cols; c += THREADS) {
        long long z = rshift_round((long long)(xr[c] - m) * multiplier, 31 - shift);
        long long q = rshift_round(mul_q31(exp_neg_q31(z), inv), 2 + k) - 128;
        yr[c] = (signed char)min(max(q, -128LL), 127LL);
    }
    // ### END SOLUTION
}
