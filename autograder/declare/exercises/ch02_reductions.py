"""Chapter 2 · Reductions: warp shuffles, a two-level block reduction, row sums in CUDA and Triton.

Device functions (exercises 1 and 2) are graded through test kernels the grader adds after the
student's cell (`HARNESS`): the same cell-library mechanism a student's later cells use.

Inputs. "randn" values are N(0, s²), s in [1, 10]. "adversarial" rows/warps cycle through:
  0 offset:   mean 1000, spread 1 (cancellation-free but large: fp16 overflows past 65504)
  1 signs:    alternating ±(100 + noise) (a sum much smaller than its terms)
  2 constant: all entries equal
  3 spike:    zeros and one entry of 1e6
Max tests add -inf entries and all-negative warps (a max that starts from 0 is wrong).

Tolerance for sums. Rounding each add of a float32 sum costs at most u = 6e-8 of the running
total, so a chain of n sequential adds is within about n · u · Σ|x| of the exact sum (worst case:
equal terms, where every rounding leans the same way); a tree of depth log2(n) is within
log2(n) · u · Σ|x|. The tolerance is 1e-4 · Σ|x| (+1e-6): any order whose sequential chains stay
below about 1500 adds passes (the reference's chains are 32 to 200 long), a single thread adding
50 000 terms may not (that is a lesson, not a bug in the grader), and a half-precision accumulator
fails: one bf16 rounding is 3.9e-3, and the offset rows overflow fp16's 65504.
Maxima must be exact: a max never rounds.
"""
from __future__ import annotations

from autograder.declare.exercise import Bench, Case, Edge, Exercise
EXERCISES: list = []  # this chapter's exercises, in notebook order: the registry collects them
register = EXERCISES.append

SUM_RTOL, SUM_ATOL = 1e-4, 1e-6
KINDS = ("offset", "signs", "constant", "spike")
ROW_SUM_THREADS = 256  # launch contract of the CUDA row sum: one block of 256 threads per row


def _values(case: Case, shape, gen, device):
    """float64 values on `device`, shaped `shape`, adversarial along the first axis."""
    import torch
    rows, cols = shape
    g = torch.Generator(device=device).manual_seed(int(torch.randint(2**62, (1,), generator=gen)))
    z = torch.randn(rows, cols, generator=g, dtype=torch.float64, device=device)
    x = z * (1 + 9 * torch.rand(rows, 1, generator=g, dtype=torch.float64, device=device))
    if case.kind == "adversarial":
        kind = torch.arange(rows, device=device) % len(KINDS)
        pick = lambda name: kind == KINDS.index(name)  # noqa: E731
        x[pick("offset")] = 1000 + z[pick("offset")]
        sign = (-1.0) ** torch.arange(cols, device=device, dtype=torch.float64)
        x[pick("signs")] = sign * (100 + z[pick("signs")])
        x[pick("constant")] = x[pick("constant")][:, :1].expand(-1, cols)
        r = torch.nonzero(pick("spike")).flatten()
        x[r] = 0.0
        x[r, torch.randint(cols, (len(r),), generator=g, device=device)] = 1e6
    return x


def _sum_problems(got, ref, x, what: str, where) -> list[str]:
    """got/ref: float64 sums; x: float64 terms (..., n) whose |.| sum sets the tolerance."""
    import torch
    tol = SUM_RTOL * x.abs().sum(dim=-1) + SUM_ATOL
    err = (got - ref).abs()
    bad = ~(err <= tol)  # NaN fails closed
    if bad.any():
        i = tuple(int(k) for k in torch.nonzero(bad)[0])
        return [f"{what} {where(i)} = {got[i]:.9g}, expected {ref[i]:.9g} (|error| {err[i]:.3g} > "
                f"tolerance {tol[i]:.3g}); {int(bad.sum())} of {bad.numel()} wrong"]
    return []


# ---- 1. warp_reduce_sum / warp_reduce_max, through a grader kernel ----

WARP_HARNESS = r"""
extern "C" __global__ void grader_warp_reduce(const float* xs, const float* xm, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // n is a multiple of 32: warps are full
    float s = warp_reduce_sum(xs[i]);
    float m = warp_reduce_max(xm[i]);
    out[i] = s;
    out[n + i] = m;
}
"""


def _warp_inputs(case: Case, shape, gen, device):
    import torch
    warps = shape[0]
    xs = _values(case, (warps, 32), gen, device)
    xm = _values(Case(shape, "randn"), (warps, 32), gen, device)
    if case.kind == "adversarial":  # maxima: -inf entries, all-negative warps, one huge lane
        k = torch.arange(warps, device=device) % 3
        xm[k == 0] = -50 - xm[k == 0].abs()
        xm[k == 1, ::3] = float("-inf")
        xm[k == 2, 7] = 3e38
    return {"xs": xs.to(torch.float32), "xm": xm.to(torch.float32)}


def _warp_reference(inputs):
    import torch
    xs, xm = (torch.as_tensor(inputs[k]).to(torch.float64) for k in ("xs", "xm"))
    return torch.stack([xs.sum(-1, keepdim=True).expand_as(xs), xm.amax(-1, keepdim=True).expand_as(xm)])


def _warp_run(ns, inputs, outs):
    import torch

    from course.cuda import compile_cuda
    xs, xm = inputs["xs"], inputs["xm"]
    warps = xs.shape[0]
    out = outs.tensor((2, warps, 32), torch.float32)
    mod = compile_cuda(WARP_HARNESS, ns)
    block = 128 if warps % 4 == 0 else 32
    mod.grader_warp_reduce((warps * 32 // block,), (block,), (xs, xm, out, warps * 32))
    return out


def _warp_verify(out, ref, inputs, case) -> list[str]:
    import torch
    y = torch.as_tensor(out).to(ref.device, torch.float64)
    xs = torch.as_tensor(inputs["xs"]).to(ref.device, torch.float64)
    lane = lambda i: f"(warp {i[0]}, lane {i[1]})"  # noqa: E731
    p = _sum_problems(y[0], ref[0], xs[:, None, :].expand(-1, 32, -1), "warp_reduce_sum", lane)
    bad_max = ~(y[1] == ref[1])
    if bad_max.any():
        i = tuple(int(k) for k in torch.nonzero(bad_max)[0])
        p.append(f"warp_reduce_max {lane(i)} = {y[1][i]:.9g}, expected {ref[1][i]:.9g}; "
                 f"{int(bad_max.sum())} of {bad_max.numel()} lanes wrong")
    if p:
        ok0 = (y[:, :, 0] - ref[:, :, 0]).abs().max() <= 1e-3 * ref[:, :, 0].abs().max()
        if ok0 and not torch.isnan(y[:, :, 0]).any():
            p[0] += (" — lane 0 is right but other lanes are not: __shfl_down_sync leaves the result in "
                     "lane 0 only; every lane must return it (the butterfly, __shfl_xor_sync)")
    return p


register(Exercise(
    id="ch02.warp_reduce",
    chapter="ch02_reductions",
    title="Warp reductions with shuffles",
    entry=("warp_reduce_sum", "warp_reduce_max"),
    kind="cuda",
    spec="__device__ float warp_reduce_sum(float v) and __device__ float warp_reduce_max(float v): "
         "called by all 32 lanes of a warp; every lane returns the sum (max) of the 32 values",
    cases={
        "correctness": [Case((8,)), Case((16,), "adversarial")],
        "hidden": [Case((1,), "adversarial"), Case((64,), "adversarial"), Case((3,), "randn")],
    },
    make_inputs=_warp_inputs,
    reference=_warp_reference,
    run=_warp_run,
    verify=_warp_verify,
    solution="kernels_ref/ch02_reductions/warp_reduce.cu",
    harness_kernels=("grader_",),
    timeout_s={"cpu": 60, "gpu": 60},
))


# ---- 2. block_reduce_sum, through a grader kernel ----

BLOCK_HARNESS = r"""
extern "C" __global__ void grader_block_reduce(const float* x, float* out, int n) {
    __shared__ float smem[32];
    if (threadIdx.x < 32) smem[threadIdx.x] = NAN;  // stale shared memory reads as NaN
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = block_reduce_sum(x[i], smem);
    float b = block_reduce_sum(2.f * x[i] + 1.f, smem);  // the buffer must be reusable at once
    out[i] = a;
    out[n + i] = b;
}
"""


def _block_inputs(case: Case, shape, gen, device):
    import torch
    return {"x": _values(case, shape, gen, device).to(torch.float32)}


def _block_reference(inputs):
    import torch
    x = torch.as_tensor(inputs["x"]).to(torch.float64)
    a = x.sum(-1, keepdim=True).expand_as(x)
    b = (2 * x + 1).sum(-1, keepdim=True).expand_as(x)
    return torch.stack([a, b])


def _block_run(ns, inputs, outs):
    import torch

    from course.cuda import compile_cuda
    x = inputs["x"]
    blocks, threads = x.shape
    out = outs.tensor((2, blocks, threads), torch.float32)
    mod = compile_cuda(BLOCK_HARNESS, ns)
    mod.grader_block_reduce((blocks,), (threads,), (x, out, x.numel()))
    return out


def _block_verify(out, ref, inputs, case) -> list[str]:
    import torch
    y = torch.as_tensor(out).to(ref.device, torch.float64)
    x = torch.as_tensor(inputs["x"]).to(ref.device, torch.float64)
    threads = x.shape[1]
    where = lambda i: f"(block {i[0]}, thread {i[1]}, blockDim.x = {threads})"  # noqa: E731
    terms = x[:, None, :].expand(-1, threads, -1)
    p = _sum_problems(y[0], ref[0], terms, "first block_reduce_sum", where)
    p += _sum_problems(y[1], ref[1], 2 * terms.abs() + 1, "second block_reduce_sum (same smem, right after)",
                       where)
    if p and torch.isnan(y).any():
        p[0] += (" — NaN: a thread read a shared-memory slot before it was written (a missing "
                 "__syncthreads()?)")
    return p


register(Exercise(
    id="ch02.block_reduce",
    chapter="ch02_reductions",
    title="Two-level block reduction",
    entry=("block_reduce_sum",),
    kind="cuda",
    spec="__device__ float block_reduce_sum(float v, float* smem): called by every thread of a block "
         "(blockDim.x a multiple of 32, at most 1024); every thread returns the block's sum; smem "
         "holds 32 floats and may be reused as soon as the call returns",
    cases={
        "correctness": [Case((4, 256), "adversarial"), Case((3, 128))],
        "hidden": [Case((2, 32), "adversarial"), Case((8, 1024), "adversarial"), Case((5, 96), "adversarial"),
                   Case((1, 64))],
    },
    make_inputs=_block_inputs,
    reference=_block_reference,
    run=_block_run,
    verify=_block_verify,
    solution="kernels_ref/ch02_reductions/block_reduce.cu",
    harness_kernels=("grader_",),
    timeout_s={"cpu": 90, "gpu": 60},
))


# ---- 3 and 4. Row sums (CUDA, Triton) ----

def _rows_inputs(case: Case, shape, gen, device):
    import torch
    return {"x": _values(case, shape, gen, device).to(torch.float32)}


def _rows_reference(inputs):
    import torch
    return torch.as_tensor(inputs["x"]).to(torch.float64).sum(-1)


def _rows_verify(out, ref, inputs, case) -> list[str]:
    import torch
    if out is None:
        return ["nothing was returned"]
    y = torch.as_tensor(out)
    if tuple(y.shape) != tuple(ref.shape) or y.dtype != torch.float32:
        return [f"output {tuple(y.shape)} {y.dtype}, expected {tuple(ref.shape)} float32"]
    yd = y.to(ref.device, torch.float64)
    x = torch.as_tensor(inputs["x"]).to(ref.device, torch.float64)
    if torch.isnan(yd).any():
        r = int(torch.nonzero(torch.isnan(yd))[0][0])
        return [f"y[{r}] is NaN: it was never written (outputs start as NaN), or a NaN came in"]
    kind = lambda r: f"row kind '{KINDS[r % len(KINDS)]}'" if case.kind == "adversarial" else "random row"  # noqa: E731
    return _sum_problems(yd, ref, x, "y", lambda i: f"[{i[0]}] ({kind(i[0])})")


def _row_sum_bytes(shape) -> int:
    rows, cols = shape
    return rows * cols * 4 + rows * 4


ROWS_CASES = {
    "correctness": [Case((64, 1000), "adversarial"), Case((16, 4096)), Case((8, 1))],
    "hidden": [Case((33, 1), "adversarial"), Case((7, 3)), Case((257, 1025), "adversarial"),
               Case((1823, 781), "adversarial", cpu_shape=(223, 781)),
               Case((4096, 8192), "adversarial", cpu_shape=(24, 8192)),
               Case((5, 50001), "adversarial", cpu_shape=(4, 20001))],
}

# Reading only: a read stream runs a little faster than a copy's read + write, so the sanity
# cap sits above the usual 1.10 (measured: both references at 104.2% of copy on an H100, judge's clock, 2026-11-23,
# benchmarks/grading_v2_bench_h100.json; 100.5% CUDA and 102.1% Triton on an H200, 2026-11-22).
ROW_SUM_BENCH = Bench(shape=(16384, 8192), nbytes=_row_sum_bytes,
                      model="read x once + write one float per row = (rows · cols + rows) · 4 B",
                      max_fraction=1.35)


def _cuda_row_sum_run(ns, inputs, outs):
    import torch
    x = inputs["x"]
    rows, cols = x.shape
    y = outs.tensor((rows,), torch.float32)
    ns["row_sum"]((rows,), (ROW_SUM_THREADS,), (x, y, rows, cols))
    return y


register(Exercise(
    id="ch02.row_sum_cuda",
    chapter="ch02_reductions",
    title="CUDA row sum",
    entry=("row_sum",),
    kind="cuda",
    spec=f'extern "C" __global__ void row_sum(const float* x, float* y, int rows, int cols): '
         f"y[r] = sum of row r; launched with one block of {ROW_SUM_THREADS} threads per row",
    cases=ROWS_CASES,
    make_inputs=_rows_inputs,
    reference=_rows_reference,
    run=_cuda_row_sum_run,
    verify=_rows_verify,
    solution="kernels_ref/ch02_reductions/row_sum.cu",
    edges=(Edge("scalar path", "widths that are not a multiple of 4 (no float4 loads)", widths=(1, 3, 781, 1025)),
           Edge("float4 path", "widths that are a multiple of 4", widths=(1000, 4096, 8192)),
           Edge("past 256 x 4 x k", "a width no power of two divides: the last thread's tail", widths=(20001, 50001)),
           Edge("every row kind", "offset, alternating signs, constant, spike", kinds=("adversarial",),
                min_rows=len(KINDS))),
    bench=ROW_SUM_BENCH,
    timeout_s={"cpu": 120, "gpu": 60},
))


def _triton_row_sum_run(ns, inputs, outs):
    import torch
    x = inputs["x"]
    y = outs.tensor((x.shape[0],), torch.float32)
    ns["row_sum_triton"](x, y)
    return y


register(Exercise(
    id="ch02.row_sum_triton",
    chapter="ch02_reductions",
    title="Triton row sum",
    entry=("row_sum_triton",),
    kind="triton",
    spec="row_sum_triton(x, y): x float32 (rows, cols), y float32 (rows,), on the course device; "
         "write the sum of each row of x into y with your own Triton kernel",
    cases=ROWS_CASES,
    make_inputs=_rows_inputs,
    reference=_rows_reference,
    run=_triton_row_sum_run,
    verify=_rows_verify,
    solution="kernels_ref/ch02_reductions/row_sum_triton.py",
    edges=(Edge("one tile", "rows that fit one tile", widths=(1, 3, 781, 1000, 1025)),
           Edge("several tiles", "rows longer than any one tile", widths=(4096, 8192, 20001, 50001)),
           Edge("every row kind", "offset, alternating signs, constant, spike", kinds=("adversarial",),
                min_rows=len(KINDS))),
    bench=ROW_SUM_BENCH,
    timeout_s={"cpu": 120, "gpu": 60},
))
