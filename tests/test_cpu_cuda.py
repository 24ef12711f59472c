"""CPU mode runs CUDA cells: every feature of the execution layer against float64 references,
and faults (deadlocks, out-of-bounds, endless loops) that come back as errors."""
import time

import pytest
import torch

import course
from course.cpucuda import CpuCudaError

cpu_only = pytest.mark.skipif(course.GPU, reason="faults of the CPU execution layer")
D = course.DEVICE  # the feature tests run unchanged on a GPU too


def run(src, kernel, grid, block, args, smem=0):
    getattr(course.compile_cuda(src), kernel)(grid, block, args, shared_mem=smem)
    if course.GPU:
        torch.cuda.synchronize()


WARP = r'''
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}
__device__ float warp_max_down(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffff, v, o));
    return __shfl_sync(0xffffffff, v, 0);
}
extern "C" __global__ void warps(const float* x, float* out, int* votes, float* up) {
    int t = threadIdx.x, lane = t % 32, w = t / 32;
    float v = x[blockIdx.x * blockDim.x + t];
    float s = warp_sum(v), m = warp_max_down(v);
    float u = __shfl_up_sync(0xffffffff, v, 1);
    if (lane == 0) { out[(blockIdx.x * 2 + 0) * 4 + w] = s; out[(blockIdx.x * 2 + 1) * 4 + w] = m; }
    up[blockIdx.x * blockDim.x + t] = u;
    unsigned b = __ballot_sync(0xffffffff, v > 0.f);
    if (lane == 0) {
        votes[(blockIdx.x * 4 + w) * 3 + 0] = __popc(b);
        votes[(blockIdx.x * 4 + w) * 3 + 1] = __any_sync(0xffffffff, v > 2.5f);
        votes[(blockIdx.x * 4 + w) * 3 + 2] = __all_sync(0xffffffff, v > -10.f);
    }
    if (lane != 0) { __any_sync(0xffffffff, v > 2.5f); __all_sync(0xffffffff, v > -10.f); }
}
'''


def test_warp_shuffles_and_votes():
    x = torch.randn(3, 128, device=D)
    out, votes = torch.full((3, 2, 4), float("nan"), device=D), torch.zeros(3, 4, 3, dtype=torch.int32, device=D)
    up = torch.empty(3, 128, device=D)
    run(WARP, "warps", 3, 128, (x, out, votes, up))
    x, out, votes, up = x.cpu(), out.cpu(), votes.cpu(), up.cpu()
    xw = x.double().view(3, 4, 32)
    assert torch.allclose(out[:, 0].double(), xw.sum(-1), atol=1e-5)
    assert torch.equal(out[:, 1], xw.max(-1).values.float())
    assert torch.equal(votes[..., 0], (xw > 0).sum(-1).int())
    assert torch.equal(votes[..., 1], (xw > 2.5).any(-1).int())
    assert torch.equal(votes[..., 2], torch.ones(3, 4, dtype=torch.int32))
    shifted = x.view(3, 4, 32).roll(1, -1)
    shifted[..., 0] = x.view(3, 4, 32)[..., 0]  # lane 0 keeps its own value
    assert torch.equal(up.view(3, 4, 32), shifted)


BLOCK = r'''
__device__ float block_sum(float v) {
    __shared__ float warp_sums[32];
    int lane = threadIdx.x % 32, w = threadIdx.x / 32;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    if (lane == 0) warp_sums[w] = v;
    __syncthreads();
    v = threadIdx.x < blockDim.x / 32 ? warp_sums[lane] : 0.f;
    if (w == 0) for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    __syncthreads();
    return v;
}
extern "C" __global__ void rowsum(const float4* __restrict__ x, float* y, int cols4) {
    extern __shared__ float scratch[];
    float acc = 0.f;
    for (int c = threadIdx.x; c < cols4; c += blockDim.x) {
        float4 v = x[(size_t)blockIdx.x * cols4 + c];
        acc += v.x + v.y + v.z + v.w;
    }
    scratch[threadIdx.x] = acc;
    __syncthreads();
    float s = block_sum(scratch[threadIdx.x]);
    if (threadIdx.x == 0) { y[blockIdx.x] = s; atomicAdd(&y[gridDim.x], s); }
}
'''


def test_two_level_block_reduction_float4_dynamic_shared_and_atomics():
    x = torch.randn(5, 1000, device=D)
    y = torch.zeros(6, device=D)
    run(BLOCK, "rowsum", 5, 256, (x, y, 250), smem=256 * 4)
    x, y = x.cpu(), y.cpu()
    assert torch.allclose(y[:5].double(), x.double().sum(-1), atol=1e-4)
    assert torch.allclose(y[5].double(), x.double().sum(), atol=1e-3)


HALF = r'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void rms(const __half* x, __nv_bfloat16* y, float* back, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;                                        // early return: drops out
    float v = __half2float(x[i]);
    y[i] = __float2bfloat16(v * rsqrtf(4.f));
    __half2 h = __floats2half2_rn(v, -v);
    back[i] = __low2float(h) + __high2float(h) + __int_as_float(0);
}
'''


def test_half_bfloat16_and_early_return():
    n = 1000
    x = torch.randn(n, device=D).half()
    y = torch.zeros(1024, dtype=torch.bfloat16, device=D)
    back = torch.full((1024,), 7.0, device=D)
    run(HALF, "rms", 4, 256, (x, y, back, n))
    x, y, back = x.cpu(), y.cpu(), back.cpu()
    assert torch.allclose(y[:n].float(), x.float() * 0.5, rtol=1e-2, atol=0)  # bf16 keeps 8 bits
    assert torch.equal(back[:n], torch.zeros(n)) and torch.equal(back[n:], torch.full((24,), 7.0))


@cpu_only
def test_softmax_1024x1024_is_fast_enough():
    src = open("kernels_ref/ch01_softmax/softmax_3pass.cu").read()
    x, y = torch.randn(1024, 1024) * 5, torch.empty(1024, 1024)
    mod = course.compile_cuda(src)
    mod.softmax_3pass(1024, 256, (x, y, 1024, 1024))  # the first launch also compiles
    t = time.perf_counter()
    mod.softmax_3pass(1024, 256, (x, y, 1024, 1024))
    assert time.perf_counter() - t < 3.0
    assert torch.allclose(y.double(), torch.softmax(x.double(), -1), rtol=1e-5, atol=1e-9)


FAULTS = {
    "partial warp in a full-mask shuffle": (r'''
    extern "C" __global__ void k(float* x) {
        float v = x[threadIdx.x];
        if (threadIdx.x % 32 < 16) v += __shfl_xor_sync(0xffffffff, v, 1);
        __syncthreads();
        x[threadIdx.x] = v;
    }''', 64, "deadlock in block .*warp intrinsic.*__syncthreads"),
    "__syncthreads in a divergent branch": (r'''
    extern "C" __global__ void k(float* x) {
        if (threadIdx.x < 32) { __syncthreads(); x[threadIdx.x] = 1; }
        else { __syncthreads(); x[threadIdx.x] = 2; }
    }''', 64, "deadlock.*line 3.*line 4"),
    "shuffle waiting for a lane that returned": (r'''
    extern "C" __global__ void k(float* x) {
        if (threadIdx.x == 5) return;
        x[threadIdx.x] = __shfl_xor_sync(0xffffffff, x[threadIdx.x], 1);
    }''', 32, "lane 5 has already returned"),
    "mask that leaves the caller out": (r'''
    extern "C" __global__ void k(float* x) {
        x[threadIdx.x] = __shfl_xor_sync(0x0000ffff, x[threadIdx.x], 1);
    }''', 32, "lane 16 calls a warp intrinsic with mask 0x0000ffff"),
}


@cpu_only
@pytest.mark.parametrize("name", list(FAULTS))
def test_faults_are_reported(name):
    src, threads, pattern = FAULTS[name]
    with pytest.raises(CpuCudaError, match=pattern):
        run(src, "k", 1, threads, (torch.zeros(threads),))


@cpu_only
def test_wild_write_crashes_the_child_not_the_notebook():
    src = r'''
    extern "C" __global__ void k(float* x) { x[threadIdx.x + (size_t)1 << 40] = 1.f; }'''
    with pytest.raises(CpuCudaError, match="crashed on the CPU"):
        run(src, "k", 1, 32, (torch.zeros(32),))
    run(BLOCK, "rowsum", 1, 32, (torch.ones(1, 4), torch.zeros(2), 1), smem=128)  # still works after


@cpu_only
def test_endless_loop_is_stopped(monkeypatch):
    import course.cpucuda as cc
    monkeypatch.setattr(cc, "TIMEOUT_S", 3.0)
    src = r'''
    extern "C" __global__ void k(float* x, int n) { for (int i = 0; i < n; i += 0) x[0] += 1.f; }'''
    t = time.perf_counter()
    with pytest.raises(CpuCudaError, match="did not finish"):
        run(src, "k", 1, 32, (torch.zeros(32), 4))
    assert time.perf_counter() - t < 10


MISC = r'''
extern "C" __global__ void misc(const int4* a, float* out, int* idx) {
    int t = threadIdx.y * blockDim.x + threadIdx.x;            // 2-D block
    int b = blockIdx.y * gridDim.x + blockIdx.x;               // 2-D grid
    int4 v = a[b * blockDim.x * blockDim.y + t];
    float s = (float)(v.x + v.y + v.z + v.w);
    __syncwarp();
    s = __fdividef(s, 2.f) + (warpSize == 32 ? 0.f : 1e9f);
    __syncwarp(0xffffffff);
    out[b * blockDim.x * blockDim.y + t] = s;
    idx[b * blockDim.x * blockDim.y + t] = b * 1000 + t;
}
'''


def test_2d_launch_int4_syncwarp_and_fast_divide():
    a = torch.randint(-50, 50, (6, 64, 4), dtype=torch.int32, device=D)
    out, idx = torch.empty(6, 64, device=D), torch.empty(6, 64, dtype=torch.int32, device=D)
    run(MISC, "misc", (3, 2), (16, 4), (a, out, idx))
    a, out, idx = a.cpu(), out.cpu(), idx.cpu()
    assert torch.equal(out, a.sum(-1).float() / 2)
    assert torch.equal(idx, torch.arange(6)[:, None] * 1000 + torch.arange(64)[None, :])
