"""CPU mode runs CUDA cells: every feature of the execution layer against float64 references,
and faults (deadlocks, out-of-bounds, endless loops, shared-memory races) that come back as errors."""
import glob
import os
import re
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


def test_abs_of_a_float_is_the_float_abs():
    """abs(float) is CUDA's float overload on both layers (C's abs(int) would make abs(0.25f) 0 on the CPU one)."""
    src = 'extern "C" __global__ void k(const float* x, float* y) { y[threadIdx.x] = abs(x[threadIdx.x]); }'
    x = torch.tensor([0.25, -1.5, -0.75, 3.0], device=D)
    y = torch.zeros(4, device=D)
    run(src, "k", 1, 4, (x, y))
    assert torch.equal(y.cpu(), x.cpu().abs())


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


# ---- shared-memory race detection (CPU mode, like compute-sanitizer's racecheck) ----------------

TREE = r'''
extern "C" __global__ void tree_sum(const float* x, float* y) {
    __shared__ float buf[256];
    int t = threadIdx.x;
    buf[t] = x[blockIdx.x * 256 + t];
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) y[blockIdx.x] = buf[0];
}
'''


def test_block_reduction_with_its_barriers_runs_clean():
    x, y = torch.randn(3, 256, device=D), torch.zeros(3, device=D)
    run(TREE, "tree_sum", 3, 256, (x, y))
    assert torch.allclose(y.cpu().double(), x.cpu().double().sum(-1), atol=1e-4)


@cpu_only
def test_missing_syncthreads_is_a_race_naming_both_lines():
    src = TREE.replace("    __syncthreads();\n    for", "    for")  # line 6 goes: the loop starts at line 6
    with pytest.raises(CpuCudaError, match=re.escape(
            "tree_sum: shared-memory race: thread (0, 0, 0) of block (0, 0, 0) read buf[128] at line 7 and "
            "thread (128, 0, 0) wrote it at line 5 with no __syncthreads() between")):
        run(src, "tree_sum", 3, 256, (torch.randn(3, 256), torch.zeros(3)))
    src = TREE.replace("        __syncthreads();\n    }", "    }")  # the barrier inside the loop: thread 0 runs
    with pytest.raises(CpuCudaError, match=re.escape(  # all levels, reading buf[1] last, before thread 1 adds to it
            "read buf[1] at line 8 and thread (1, 0, 0) wrote it at line 8 with no __syncthreads() between (nor a "
            "__syncwarp() or shuffle that both join: they are lanes 0 and 1 of one warp)")):
        run(src, "tree_sum", 3, 256, (torch.randn(3, 256), torch.zeros(3)))


def test_a_thread_that_writes_then_reads_its_own_slot_is_not_a_race():
    src = r'''
    extern "C" __global__ void own(float* y) {
        __shared__ float s[64];
        __shared__ __half h[64];  // 2-byte slots: neighbours share a word, not a byte
        int t = threadIdx.x;
        s[t] = t; h[t] = __float2half(1.f);
        float v = s[t] + __half2float(h[t]);
        s[t] = v * 2.f;
        y[t] = s[t];
    }'''
    y = torch.zeros(64, device=D)
    run("#include <cuda_fp16.h>\n" + src, "own", 1, 64, (y,))
    assert torch.equal(y.cpu(), (torch.arange(64.0) + 1) * 2)


ATOMICS = r'''
extern "C" __global__ void count(float* y) {
    __shared__ float total;
    __shared__ unsigned int n;
    if (threadIdx.x == 0) { total = 0.f; n = 0; }
    __syncthreads();
    atomicAdd(&total, 0.5f);
    atomicAdd(&n, 1);
    __syncthreads();
    y[blockIdx.x * blockDim.x + threadIdx.x] = total + n;
}
'''


def test_shared_memory_atomics_are_not_races():
    y = torch.zeros(2, 96, device=D)
    run(ATOMICS, "count", 2, 96, (y,))
    assert torch.equal(y.cpu(), torch.full((2, 96), 96 * 1.5))


@cpu_only
def test_reading_what_other_threads_update_atomically_needs_a_barrier():
    src = ATOMICS.replace("    atomicAdd(&n, 1);\n    __syncthreads();", "    atomicAdd(&n, 1);")
    with pytest.raises(CpuCudaError, match=r"thread \(0, 0, 0\) of block \(0, 0, 0\) read total at line 9 and "
                                           r"thread \(1, 0, 0\) updated it atomically at line 7"):
        run(src, "count", 2, 96, (torch.zeros(2, 96),))


LANES = r'''
extern "C" __global__ void lanes(float* y) {
    __shared__ float s[64];
    int l = threadIdx.x;
    s[l] = l;
    ORDER
    y[l] = s[l ^ 1];
}
'''


@cpu_only
@pytest.mark.parametrize("order,race", [
    ("__syncwarp();", False),
    ("float q = __shfl_xor_sync(0xffffffff, 1.f, 1);", False),
    ("__syncwarp(0x3u << (l & 30));", False),  # a mask naming just the two lanes orders them
    ("__syncwarp(0x0000ffffu << (l & 16)); if (l == 31) s[0] = 7;", True),  # lane 31 and lane 0: not both in it
    ("", True),
])
def test_lanes_of_a_warp_are_ordered_only_by_a_warp_operation_both_join(order, race):
    src = LANES.replace("ORDER", order)
    if not race:
        y = torch.zeros(64)
        run(src, "lanes", 1, 64, (y,))
        assert torch.equal(y, torch.arange(64.0).view(32, 2).flip(-1).reshape(64))
        return
    with pytest.raises(CpuCudaError, match=r"shared-memory race: .* with no __syncthreads\(\) between \(nor a "
                                           r"__syncwarp\(\) or shuffle that both join: they are lanes \d+ and \d+"):
        run(src, "lanes", 1, 64, (torch.zeros(64),))


NAMED = {  # kernel (k(float* y)), launch (grid, block, shared bytes), what the report says
    "dynamic shared memory": (r"""
    extern "C" __global__ void k(float* y) {
        extern __shared__ float scratch[];
        scratch[threadIdx.x] = 1.f;
        y[threadIdx.x] = scratch[(threadIdx.x + 1) % blockDim.x];
    }""", (1, 64, 256), r"read scratch\[1\] at line 5 and thread \(1, 0, 0\) wrote it at line 4"),
    "2-D tile, 2-D block": (r"""
    extern "C" __global__ void k(float* y) {
        __shared__ float tile[4][8];
        tile[threadIdx.y][threadIdx.x] = threadIdx.x;
        y[threadIdx.y * 8 + threadIdx.x] = tile[(threadIdx.y + 1) % 4][threadIdx.x];
    }""", (1, (8, 4), 0), r"thread \(0, 0, 0\) of block \(0, 0, 0\) read tile\[1\]\[0\] at line 5 and "
                          r"thread \(0, 1, 0\) wrote it at line 4"),
    "float4 store into a float array": (r"""
    extern "C" __global__ void k(float* y) {
        __shared__ __align__(16) float t[256];
        reinterpret_cast<float4*>(t)[threadIdx.x] = make_float4(1.f, 2.f, 3.f, 4.f);
        y[threadIdx.x] = t[(threadIdx.x * 4 + 6) % 256];
    }""", ((2, 1), 64, 0), r"thread \(0, 0, 0\) of block \(0, 0, 0\) read t\[6\] at line 5 and "
                           r"thread \(1, 0, 0\) wrote it at line 4"),
    "device function of an earlier cell": (r"""
    extern "C" __global__ void k(float* y) {
        __shared__ float s[64];
        y[threadIdx.x] = neighbour(1.f, s);
    }""", (1, 64, 0), r"read s\[32\] at line 4 of the cell of neighbour and thread \(32, 0, 0\) wrote it at "
                      r"line 3 of the cell of neighbour"),
}
NEIGHBOUR = r"""
__device__ float neighbour(float v, float* s) {
    s[threadIdx.x] = v;
    return s[threadIdx.x ^ 32];
}"""


@cpu_only
@pytest.mark.parametrize("name", list(NAMED))
def test_race_reports_name_the_variable_the_element_and_the_cell(name):
    src, (grid, block, smem), pattern = NAMED[name]
    ns = dict(course.compile_cuda(NEIGHBOUR).device_functions)  # a library cell, as a notebook has them
    with pytest.raises(CpuCudaError, match=pattern):
        course.compile_cuda(src, ns).k(grid, block, (torch.zeros(64),), shared_mem=smem)


@cpu_only
def test_race_detection_can_be_turned_off(monkeypatch):
    import course.cpucuda as cc
    monkeypatch.setattr(cc, "RACECHECK", False)
    src = TREE.replace("    __syncthreads();\n    for", "    for")
    run(src, "tree_sum", 1, 256, (torch.randn(1, 256), torch.zeros(1)))  # wrong, but not reported


def test_shared_declarations_the_translator_rewrites():
    from course.cpucuda import translate
    out = translate("__shared__ float sm[32], sd[32];\n__shared__ __align__(16) float4 t[4][65]; // x\n"
                    "static __shared__ unsigned n;\nextern __shared__ float d[];\n#define S __shared__ int q[2];\n")
    assert out.splitlines() == [
        'static float (&sm)[32] = *fc::shared_var<float [32]>("sm", 0); '
        'static float (&sd)[32] = *fc::shared_var<float [32]>("sd", 0);',
        'static float4 (&t)[4][65] = *fc::shared_var<float4 [4][65]>("t", (size_t)(16)); // x',
        'static unsigned (&n) = *fc::shared_var<unsigned >("n", 0);',
        'float* d = fc::dynamic_smem<float>("d");',
        '#define S __shared__ int q[2];',  # left alone: a plain static, not checked
    ]


# Every CUDA reference solution runs clean with race detection on, launched as its exercise launches
# it (autograder/declare/exercises), through the same library-cell mechanism, on shapes that take each path.
REF = "kernels_ref/"


def _ref(path: str) -> str:
    from kernels_ref import notebook_part
    return "\n" + notebook_part(os.path.join(os.path.dirname(os.path.dirname(__file__)), REF + path))


def _compile_with(path_or_src: str, *libs: str):
    ns: dict = {}
    for lib in libs:
        ns.update(course.compile_cuda(_ref(lib), ns).device_functions)
    return course.compile_cuda(_ref(path_or_src) if path_or_src.endswith(".cu") else path_or_src, ns)


def _softmax_3pass():
    mod = _compile_with("ch01_softmax/softmax_3pass.cu")
    for rows, cols in [(5, 3), (16, 1024), (3, 781)]:
        x = torch.randn(rows, cols) * 5
        y = torch.empty_like(x)
        mod.softmax_3pass(rows, 256, (x, y, rows, cols))
        assert torch.allclose(y.double(), torch.softmax(x.double(), -1), atol=1e-6)


def _warp_reduce():
    mod = _compile_with(r'''
    extern "C" __global__ void h(const float* x, float* out) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        out[2 * i] = warp_reduce_sum(x[i]);
        out[2 * i + 1] = warp_reduce_max(x[i]);
    }''', "ch02_reductions/warp_reduce.cu")
    x, out = torch.randn(128), torch.empty(128, 2)
    mod.h(2, 64, (x, out))
    w = x.view(4, 1, 32).double()
    assert torch.allclose(out[:, 0].view(4, 32).double(), w.sum(-1).expand(4, 32), atol=1e-4)
    assert torch.equal(out[:, 1].view(4, 32), x.view(4, 32).amax(-1, keepdim=True).expand(4, 32))


BLOCK_HARNESS = r'''
extern "C" __global__ void h(const float* x, float* out) {
    __shared__ float smem[32];
    if (threadIdx.x < 32) smem[threadIdx.x] = NAN;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = block_reduce_sum(x[i], smem);
    float b = block_reduce_sum(2.f * x[i] + 1.f, smem);  // the buffer is reused at once
    out[2 * i] = a;
    out[2 * i + 1] = b;
}'''


def _block_reduce():
    mod = _compile_with(BLOCK_HARNESS, "ch02_reductions/warp_reduce.cu", "ch02_reductions/block_reduce.cu")
    for threads in (32, 96, 1024):
        x, out = torch.randn(3, threads), torch.empty(3, threads, 2)
        mod.h(3, threads, (x, out))
        s = x.double().sum(-1, keepdim=True)
        assert torch.allclose(out[..., 0].double(), s.expand(3, threads), atol=1e-3)
        assert torch.allclose(out[..., 1].double(), (2 * s + threads).expand(3, threads), atol=1e-3)


def _row_sum():
    mod = _compile_with("ch02_reductions/row_sum.cu", "ch02_reductions/warp_reduce.cu",
                        "ch02_reductions/block_reduce.cu")
    for rows, cols in [(5, 1000), (4, 1025), (3, 1)]:
        x, y = torch.randn(rows, cols), torch.empty(rows)
        mod.row_sum(rows, 256, (x, y, rows, cols))
        assert torch.allclose(y.double(), x.double().sum(-1), atol=1e-3)


def _md_ops():
    mod = _compile_with(r'''
    extern "C" __global__ void h(const float* x, float* out, int per_lane) {
        int lane = threadIdx.x & 31, warp = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
        const float* xl = x + ((size_t)warp * 32 + lane) * per_lane;
        float m = -INFINITY, d = 0.f;
        for (int k = 0; k < per_lane; ++k) md_push(m, d, xl[k]);
        warp_merge_md(m, d);
        out[2 * (warp * 32 + lane)] = m;
        out[2 * (warp * 32 + lane) + 1] = d;
    }''', "ch03_online_softmax/md_ops.cu")
    x, out = torch.randn(4, 32 * 5) * 3, torch.empty(4, 32, 2)
    x[1, :40] = float("-inf")
    mod.h(1, 128, (x, out, 5))
    m = x.double().amax(-1, keepdim=True)
    assert torch.equal(out[..., 0], m.float().expand(4, 32))
    assert torch.allclose(out[..., 1].double(), torch.exp(x.double() - m).sum(-1, keepdim=True).expand(4, 32),
                          rtol=1e-5)


def _online_softmax_warp():
    mod = _compile_with("ch03_online_softmax/online_softmax_warp.cu", "ch03_online_softmax/md_ops.cu")
    for rows, cols in [(9, 1000), (3, 4096), (10, 1025), (8, 1)]:  # registers, long rows, scalar, 1 column
        x = torch.randn(rows, cols) * 5
        y = torch.empty_like(x)
        mod.online_softmax_warp((rows + 7) // 8, 256, (x, y, rows, cols))
        assert torch.allclose(y.double(), torch.softmax(x.double(), -1), atol=1e-6)


def _online_softmax_block():
    mod = _compile_with("ch03_online_softmax/online_softmax_block.cu", "ch03_online_softmax/md_ops.cu")
    for rows, cols in [(3, 4096), (4, 1025)]:
        x = torch.randn(rows, cols) * 5
        y = torch.empty_like(x)
        mod.online_softmax_block(rows, 512, (x, y, rows, cols))
        assert torch.allclose(y.double(), torch.softmax(x.double(), -1), atol=1e-6)


def _flash_attention_warp():
    mod = _compile_with("ch04_flash_attention/flash_attention_warp.cu")
    for (B, H, T, Dh), causal in [((1, 2, 37, 64), 0), ((1, 2, 37, 64), 1), ((2, 1, 10, 32), 1), ((1, 1, 9, 128), 0)]:
        q, k, v = (torch.randn(B, H, T, Dh) for _ in range(3))
        o, rows = torch.empty(B, H, T, Dh), B * H * T
        mod.flash_attention_warp((rows + 3) // 4, 128, (q, k, v, o, rows, T, Dh, causal))
        ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(),
                                                               is_causal=bool(causal))
        assert torch.allclose(o.double(), ref, atol=1e-4)


def _layernorm_welford(path="ch05_fused_norms/layernorm_welford.cu", shapes=((4, 1000), (3, 1001), (2, 8196))):
    mod = _compile_with(path)
    for rows, cols in shapes:  # registers, odd width, too long for registers
        x, g, b = torch.randn(rows, cols) * 3 + 10, torch.rand(cols) + 0.5, torch.randn(cols)
        y = torch.empty_like(x)
        mod.layernorm_welford(rows, 256, (x, g, b, y, rows, cols, 1e-5))
        ref = torch.nn.functional.layer_norm(x.double(), (cols,), g.double(), b.double(), 1e-5)
        assert torch.allclose(y.double(), ref, atol=1e-4)


def _rmsnorm_vec(path="ch05_fused_norms/rmsnorm_vec.cu", shapes=((4, 1024), (3, 8), (2, 8192))):
    mod = _compile_with(path)
    for rows, cols in shapes:
        x, g = torch.randn(rows, cols).bfloat16(), (torch.rand(cols) + 0.5).bfloat16()
        y = torch.empty_like(x)
        mod.rmsnorm_vec(rows, 256, (x, g, y, rows, cols, 1e-5))
        ref = torch.nn.functional.rms_norm(x.double(), (cols,), g.double(), 1e-5)
        assert torch.allclose(y.double(), ref, rtol=1e-2, atol=1e-2)


def _softmax_int8():
    import numpy as np

    from kernels_ref.ch06_low_precision.softmax_int8 import softmax_int8
    mod = _compile_with("ch06_low_precision/softmax_int8.cu")
    rng = np.random.default_rng(0)
    for rows, cols in [(3, 1), (4, 100), (2, 1000)]:
        x = rng.integers(-128, 128, size=(rows, cols)).astype(np.int8)
        multiplier, shift = 1 << 30, 25  # an input scale of 2^-3
        y = torch.zeros(rows, cols, dtype=torch.int8)
        mod.softmax_int8_cuda(rows, 256, (torch.from_numpy(x), y, rows, cols, multiplier, shift))
        assert np.array_equal(y.numpy(), softmax_int8(x, multiplier, shift))


REFERENCE_KERNELS = {
    "ch01_softmax/softmax_3pass.cu": _softmax_3pass,
    "ch02_reductions/warp_reduce.cu": _warp_reduce,
    "ch02_reductions/block_reduce.cu": _block_reduce,
    "ch02_reductions/row_sum.cu": _row_sum,
    "ch03_online_softmax/md_ops.cu": _md_ops,
    "ch03_online_softmax/online_softmax_warp.cu": _online_softmax_warp,
    "ch03_online_softmax/online_softmax_block.cu": _online_softmax_block,
    "ch04_flash_attention/flash_attention_warp.cu": _flash_attention_warp,
    "ch05_fused_norms/layernorm_welford.cu": _layernorm_welford,
    "ch05_fused_norms/rmsnorm_vec.cu": _rmsnorm_vec,
    # the fast references (a warp per row up to 2048 columns, a block per row past that or for odd widths)
    "ch05_fused_norms/layernorm_rows.cu": lambda: _layernorm_welford("ch05_fused_norms/layernorm_rows.cu",
                                                                     ((9, 1024), (3, 2048), (3, 1001), (2, 8196))),
    "ch05_fused_norms/rmsnorm_rows.cu": lambda: _rmsnorm_vec("ch05_fused_norms/rmsnorm_rows.cu",
                                                             ((9, 1024), (3, 2048), (3, 12), (2, 8192))),
    "ch06_low_precision/softmax_int8.cu": _softmax_int8,
}
# Reference kernels the CPU execution layer cannot run, and where they are tested instead
NOT_ON_THE_CPU_LAYER = {
    "ch03_online_softmax/softmax_cluster.cu": "thread-block cluster PTX (mapa, barrier.cluster): compiled for sm_90 "
                                              "on the CPU and run on a Hopper GPU by tests/test_softmax_cluster.py",
}


def test_every_cuda_reference_kernel_is_covered():
    root = os.path.dirname(os.path.dirname(__file__))
    found = sorted(os.path.relpath(p, os.path.join(root, REF)) for p in glob.glob(os.path.join(root, REF, "*", "*.cu")))
    assert found == sorted([*REFERENCE_KERNELS, *NOT_ON_THE_CPU_LAYER])


@cpu_only
@pytest.mark.parametrize("path", list(REFERENCE_KERNELS))
def test_reference_kernels_run_clean_under_race_detection(path):
    import course.cpucuda as cc
    assert cc.RACECHECK
    REFERENCE_KERNELS[path]()  # a race, deadlock or wrong result raises
