"""course.cuda.traffic: the memory traffic of one launch, counted on the CPU execution layer, against
kernels whose traffic is known. Every number asserted is derived in the comments from the launch.

Terms (course/cpucuda/traffic.py): a warp is 32 consecutive threads of a block, x-major; a request is
one load or store instruction executed by a warp's active lanes; a global request touches some
distinct 32-byte sectors; a shared request costs as many wavefronts as the most distinct 4-byte words
in one of the 32 banks. Tensors from torch's CPU allocator are 64-byte aligned, so a float tensor's
element 8k starts a sector."""
import pytest
import torch

import course
from course import cpucuda
from course.cpucuda import CpuCudaError
from course.cuda import traffic

pytestmark = pytest.mark.skipif(course.GPU, reason="counts the CPU layer's launches; on a GPU they run on CPU copies")

SRC = r'''
extern "C" __global__ void copy(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
extern "C" __global__ void copy4(const float4* x, float4* y, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) y[i] = x[i];
}
extern "C" __global__ void strided(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[(size_t)i * 32];
}
extern "C" __global__ void broadcast(const float* x, float* y) {
    y[blockIdx.x * blockDim.x + threadIdx.x] = x[0];
}
extern "C" __global__ void xmajor(const float* x, float* y, float* z) {
    int i = threadIdx.y * blockDim.x + threadIdx.x, j = threadIdx.x * blockDim.y + threadIdx.y;
    y[i] = x[i];
    z[j] = x[i];
}
extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;   // one thread per row
    if (r >= rows) return;
    float s = 0.f;
    for (int c = 0; c < cols; ++c) s += x[(size_t)r * cols + c];
    y[r] = s;
}
#define TILE 32
extern "C" __global__ void transpose_naive(const float* in, float* out, int n) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x; y = blockIdx.x * TILE + threadIdx.y;
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}
extern "C" __global__ void transpose_padded(const float* in, float* out, int n) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x; y = blockIdx.x * TILE + threadIdx.y;
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}
// Chapter 1's L1 normalisation: reads its input twice (once to sum, once to scale).
#define EX_THREADS 256
__device__ float tree_sum(float v, float* buf) {
    int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (int s = EX_THREADS / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    float total = buf[0];
    __syncthreads();
    return total;
}
extern "C" __global__ void l1_normalize(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    __shared__ float buf[EX_THREADS];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float part = 0.f;
    for (int c = threadIdx.x; c < cols; c += EX_THREADS) part += fabsf(xr[c]);
    float total = tree_sum(part, buf);
    float inv = 1.f / fmaxf(total, 1e-30f);
    for (int c = threadIdx.x; c < cols; c += EX_THREADS) yr[c] = xr[c] * inv;
}
extern "C" __global__ void stride2(float* y) {
    extern __shared__ float sm[];
    sm[2 * threadIdx.x] = threadIdx.x;
    __syncthreads();
    y[threadIdx.x] = sm[2 * threadIdx.x];
}
extern "C" __global__ void racy(float* y) {
    __shared__ float s[64];
    s[threadIdx.x] = threadIdx.x;
    y[threadIdx.x] = s[63 - threadIdx.x];             // no __syncthreads() between
}
'''


@pytest.fixture(scope="module")
def mod():
    return course.compile_cuda(SRC)


def only(rep, space, kind, buffer=None):
    rows = [a for a in rep.accesses if a.space == space and a.kind == kind and buffer in (None, a.buffer)]
    assert len(rows) == 1, rows
    return rows[0]


def test_coalesced_copy(mod):
    # n = 4096 floats, 16 blocks of 256: 4096 / 32 = 128 warps, one load and one store request each.
    # A warp's 32 lanes load 32 consecutive floats = 128 B = 4 sectors, the ideal; bytes = the sizes.
    x, y = torch.randn(4096), torch.empty(4096)
    rep = traffic(mod.copy, 16, 256, (x, y, 4096))
    assert torch.equal(y, x)  # the launch ran
    assert (rep.read_bytes, rep.written_bytes) == (16384, 16384)
    assert (rep.ideal_read_bytes, rep.ideal_written_bytes) == (16384, 16384)
    assert rep.ratio == 1.0 and rep.bytes_per_output == rep.ideal_bytes_per_output == 8.0
    assert rep.requests("global", "load") == rep.requests("global", "store") == 128
    assert rep.sectors("load") == rep.sectors("store") == 128 * 4
    assert rep.sectors_per_request() == rep.ideal_sectors_per_request() == 4.0
    assert rep.requests("shared") == 0
    load = only(rep, "global", "load")
    assert (load.line, load.buffer, load.lanes) == ("line 4", "x", 128 * 32)
    text = str(rep)
    assert "1.00x ideal" in text and "line 4: load x: 128 requests" in text


def test_partial_warp(mod):
    # 48 threads: warp 0 has 32 lanes (128 B, 4 sectors), warp 1 has 16 (64 B, 2 sectors, ideal 2).
    rep = traffic(mod.copy, 1, 48, (torch.randn(48), torch.empty(48), 48))
    load = only(rep, "global", "load")
    assert (load.requests, load.lanes, load.sectors, load.ideal_sectors) == (2, 48, 6, 6)


def test_vector_copy(mod):
    # float4: a warp's request is 32 x 16 B = 512 B = 16 sectors, the ideal for 16-byte accesses.
    # 1024 float4 in 4 blocks of 256: 32 warps, 32 requests each way.
    x, y = torch.randn(4096), torch.empty(4096)
    rep = traffic(mod.copy4, 4, 256, (x, y, 1024))
    assert torch.equal(y, x)
    assert rep.requests("global", "load") == 32
    assert rep.sectors_per_request("load") == rep.ideal_sectors_per_request("load") == 16.0
    assert (rep.read_bytes, rep.written_bytes, rep.ratio) == (16384, 16384, 1.0)


def test_strided_read(mod):
    # Lane i reads x[32 i]: its lanes are 128 B apart, so each of the 128 load requests touches
    # 32 sectors (ideal 4: 128 distinct bytes). Bytes requested: 4096 x 4 = 16384, 1/32 of x
    # (524288 B, the ideal for reading x once); in sectors 128 x 32 x 32 B = 131072 B.
    x, y = torch.randn(4096 * 32), torch.empty(4096)
    rep = traffic(mod.strided, 16, 256, (x, y, 4096))
    assert torch.equal(y, x[::32])
    load = only(rep, "global", "load")
    assert (load.requests, load.per_request, load.ideal_per_request) == (128, 32.0, 4.0)
    assert rep.buffers["x"].read == 16384 and rep.ideal_read_bytes == 524288
    assert rep.sector_bytes("load") == 131072
    assert only(rep, "global", "store").per_request == 4.0


def test_broadcast_is_one_sector(mod):
    # All 32 lanes load x[0]: 1 distinct sector, ideal 1 (4 distinct bytes); 128 threads = 4 requests.
    rep = traffic(mod.broadcast, 2, 64, (torch.randn(1), torch.empty(128)))
    load = only(rep, "global", "load")
    assert (load.requests, load.sectors, load.ideal_sectors, load.bytes) == (4, 4, 4, 512)


def test_warps_are_x_major(mod):
    # block (16, 16): warp w holds threadIdx.y = 2w and 2w + 1, all 16 x. y[i] with i = y*16 + x:
    # 32 consecutive floats, 4 sectors. z[j] with j = x*16 + y: 16 values of x, 64 B apart, each
    # holding the two y: 16 sectors per request. 256 threads = 8 warps = 8 requests each.
    x, y, z = torch.randn(256), torch.empty(256), torch.empty(256)
    rep = traffic(mod.xmajor, 1, (16, 16), (x, y, z))
    assert torch.equal(y, x) and torch.equal(z.view(16, 16).t(), x.view(16, 16))
    assert only(rep, "global", "store", "y").per_request == 4.0
    zs = only(rep, "global", "store", "z")
    assert (zs.requests, zs.per_request, zs.ideal_per_request) == (8, 16.0, 4.0)


def test_row_per_thread_reduction_is_uncoalesced(mod):
    # 128 rows of 64 floats, one thread per row, 2 blocks of 64: 4 warps, each runs the load 64
    # times = 256 requests; its lanes are 64 x 4 = 256 B apart: 32 sectors per request (ideal 4).
    # Bytes requested = x's size (32768 B), but in sectors 256 x 32 x 32 B = 262144 B = 8x.
    x, y = torch.randn(128, 64), torch.empty(128)
    rep = traffic(mod.row_sum, 2, 64, (x, y, 128, 64))
    assert torch.allclose(y, x.sum(1), atol=1e-4)
    load = only(rep, "global", "load")
    assert (load.requests, load.per_request, load.ideal_per_request) == (256, 32.0, 4.0)
    assert rep.read_bytes == rep.ideal_read_bytes == 32768
    assert rep.sector_bytes("load") == 8 * 32768
    store = only(rep, "global", "store")
    assert (store.requests, store.per_request) == (4, 4.0)  # y[r]: consecutive rows, coalesced


@pytest.mark.parametrize("kernel,wavefronts", [("transpose_naive", 32), ("transpose_padded", 1)])
def test_transpose_bank_conflicts(mod, kernel, wavefronts):
    # 64 x 64 in (2, 2) blocks of (32, 32): 4 x 32 = 128 warps; a warp is one threadIdx.y and all 32 x.
    # Store tile[y][x]: words 32y + x (or 33y + x), 32 banks, 1 wavefront. Load tile[x][y]: words
    # 32x + y all in bank y: 32 distinct words in one bank, 32 wavefronts (31 conflicts per request);
    # padded, 33x + y falls in bank (x + y) % 32: 32 banks, 1 wavefront. Global: coalesced, 4 sectors.
    x, out = torch.randn(64, 64), torch.empty(64, 64)
    rep = traffic(getattr(mod, kernel), (2, 2), (32, 32), (x, out, 64))
    assert torch.equal(out, x.t())
    store, load = only(rep, "shared", "store", "tile"), only(rep, "shared", "load", "tile")
    assert (store.requests, store.wavefronts, store.bank_conflicts) == (128, 128, 0)
    assert (load.requests, load.wavefronts, load.ideal_wavefronts) == (128, 128 * wavefronts, 128)
    assert rep.bank_conflicts() == 128 * (wavefronts - 1)  # 3968 naive, 0 padded
    assert rep.wavefronts_per_request("load") == wavefronts
    assert rep.sectors_per_request() == 4.0 and rep.ratio == 1.0


def test_two_way_conflict_in_dynamic_shared_memory(mod):
    # sm[2t]: a warp's 32 words 0, 2, .., 62 fall in the 16 even banks, two distinct words each:
    # 2 wavefronts per request (ideal 1: 32 distinct words). 64 threads: 2 requests each way.
    y = torch.empty(64)
    rep = traffic(mod.stride2, 1, 64, (y,), shared_mem=512)
    assert torch.equal(y, torch.arange(64.0))
    for kind in ("store", "load"):
        a = only(rep, "shared", kind, "sm")
        assert (a.requests, a.wavefronts, a.ideal_wavefronts, a.bank_conflicts) == (2, 4, 2, 2)
    assert rep.wavefronts_per_request() == 2.0


def test_input_read_twice(mod):
    # 4 rows of 1024, a block of 256 per row: x is read in both loops, 2 x 16384 B = 2x ideal; y
    # written once. Each loop: 8 warps x 4 iterations x 4 blocks = 128 coalesced requests (4 sectors).
    # Per output element: (32768 + 16384) / 4096 = 12 B against the ideal 8.
    x, y = torch.randn(4, 1024), torch.empty(4, 1024)
    rep = traffic(mod.l1_normalize, 4, 256, (x, y, 4, 1024))
    assert torch.allclose(y, x / x.abs().sum(1, keepdim=True), atol=1e-6)
    assert rep.buffers["x"].read == 2 * 16384 and rep.buffers["y"].written == 16384
    assert (rep.read_bytes, rep.ideal_read_bytes) == (32768, 16384)
    assert (rep.bytes_per_output, rep.ideal_bytes_per_output, rep.ratio) == (12.0, 8.0, 1.5)
    loads = [a for a in rep.accesses if a.space == "global" and a.kind == "load"]
    assert [(a.requests, a.per_request) for a in loads] == [(128, 4.0), (128, 4.0)]
    assert loads[0].line != loads[1].line
    # The tree in shared memory, per block: buf[t] = v by 8 warps; the loop's `buf[t] += buf[t + s]`
    # runs in 4 + 2 + 1 warps for s = 128, 64, 32 and in warp 0 for s = 16 .. 1: 12 warp-iterations of
    # two loads and a store; buf[0] read by 8 warps (a broadcast). x 4 blocks: loads 4 x (24 + 8) =
    # 128, stores 4 x (8 + 12) = 80, every one a single wavefront (no conflicts).
    assert {a.buffer for a in rep.accesses if a.space == "shared"} == {"buf"}
    assert rep.requests("shared", "load") == rep.wavefronts("load") == 128
    assert rep.requests("shared", "store") == rep.wavefronts("store") == 80
    assert rep.bank_conflicts() == 0


def test_race_check_as_configured(mod):
    # Counting leaves the race check as it is: on, the write and the read of s[] race; with
    # FLASHCOURSE_CPU_RACECHECK=0 the launch runs and is counted (64 threads: 2 requests each way).
    if cpucuda.RACECHECK:
        with pytest.raises(CpuCudaError, match="shared-memory race"):
            traffic(mod.racy, 1, 64, (torch.empty(64),))
    else:
        rep = traffic(mod.racy, 1, 64, (torch.empty(64),))
        assert rep.requests("shared", "store") == rep.requests("shared", "load") == 2


def test_api_errors(mod):
    with pytest.raises(TypeError, match="takes 3 arguments"):
        traffic(mod.copy, 1, 32, (torch.empty(32),))
    with pytest.raises(TypeError, match="a CUDA kernel"):
        traffic(print, 1, 32, ())
    stub = course.compile_cuda('extern "C" __global__ void k(float* y) { NOT_IMPLEMENTED(); }')
    with pytest.raises(course.NotImplementedYet):
        stub.k.traffic(1, 32, (torch.empty(32),))
