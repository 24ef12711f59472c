"""Chapter 1 · Softmax: NumPy safe softmax, Triton row softmax, CUDA 3-pass softmax.

Every softmax exercise computes y = softmax(x) along the last axis of a 2-D float32 x.

Inputs. "randn" rows are N(0, s²) with s drawn in [1, 10]. "adversarial" rows cycle
through five kinds that break a naive kernel:
  0 large:    values near +100 (exp overflows fp32 past 88.7)
  1 neginf:   some entries -inf, the first always (their output is exactly 0), one finite
  2 constant: all entries equal (output 1/cols everywhere)
  3 dominant: one entry 60 above the rest (output ~1 there, ~1e-26 elsewhere)
  4 small:    values near -100 (exp underflows to 0: 0/0 without the max)
  5 spike:    N(0, 1) and one entry at 100 (e^(x - m) overflows fp32 unless m is the true max: a
              reduction that misses any entry, e.g. a tree that skips a lane, produces inf/NaN;
              "dominant", 60 above, stays finite even then), in the row's last column in every
              other spike row (a max that skips the tail: the last vector, tile or register chunk)
Kind 5 was added after mutation testing (autograder/instructor/mutate.py): block maxima whose tree skipped an
element, and a max that skipped the row's last register chunk, passed every other case. Values are
kept within about ±100 on purpose: the legitimate exp2 variant that scales x by log2(e) before
subtracting the max (as FlashAttention does) loses |x| · 2^-24 in the exponent, 2.7e-3 relative at
|x| = 7e4, past RTOL; so logits past float16's range (where a max kept in half precision would
overflow) cannot be graded against it, and such a max is only a shift below them.

Tolerance. Outputs are compared with a float64 softmax of the same fp32 input:
|y - ref| <= RTOL·|ref| + ATOL. RTOL = 1e-4 is about 1700 fp32 ulps: room for __expf
(its error grows with |x - max|, ~6e-6 relative at 100) and for a sequential fp32
sum over 16k terms (6e-5 measured on an H200), yet 5x tighter than fp16 rounding
(4.9e-4), so a kernel that computes exp or the sum in half precision fails. ATOL = 1e-9 only forgives values that
underflow fp32. Rows must also sum to 1 within 1e-4, which a zero output cannot.

Half-precision inputs (Chapter 3) are compared with the float64 softmax of the same half
input, and the output is stored in the input's dtype, so one rounding of the output sets the
tolerance, allowing a full ulp (a conversion may truncate; the Triton interpreter's does):
float16 keeps 11 bits (ulp 9.8e-4 relative: RTOL 1.5e-3; values below 6.1e-5 are subnormal with
spacing 6e-8: ATOL 1e-7), bfloat16 keeps 8 bits (ulp 7.8e-3: RTOL 1e-2). Row sums then hold to
RTOL plus cols · ATOL. An fp16 accumulator over thousands of terms fails these.
"""
from __future__ import annotations

import numpy as np

from autograder.declare.exercise import Bench, Case, Edge, Exercise
EXERCISES: list = []  # this chapter's exercises, in notebook order: the registry collects them
register = EXERCISES.append

RTOL, ATOL, SUM_TOL = 1e-4, 1e-9, 1e-4
TOLERANCES = {"float32": (RTOL, ATOL, SUM_TOL), "float16": (1.5e-3, 1e-7, 1.5e-3), "bfloat16": (1e-2, 1e-9, 1e-2)}
KINDS = ("large", "neginf", "constant", "dominant", "small", "spike")
CUDA_THREADS = 256  # launch contract of the CUDA exercise: one block of 256 threads per row


def make_inputs(case: Case, shape, gen, device):
    """Inputs drawn on `device` (the GPU in GPU mode: large cases stay fast) from `gen`."""
    import torch
    rows, cols = shape
    g = torch.Generator(device=device).manual_seed(int(torch.randint(2**62, (1,), generator=gen)))
    z = torch.randn(rows, cols, generator=g, dtype=torch.float64, device=device)
    scale = 1 + 9 * torch.rand(rows, 1, generator=g, dtype=torch.float64, device=device)
    x = z * scale
    if case.kind == "adversarial":
        kind = torch.arange(rows, device=device) % len(KINDS)
        pick = lambda name: kind == KINDS.index(name)  # noqa: E731
        x[pick("large")] = 100 + 2 * z[pick("large")]
        x[pick("small")] = -100 + 2 * z[pick("small")]
        x[pick("constant")] = x[pick("constant")][:, :1].expand(-1, cols)
        r = torch.nonzero(pick("dominant")).flatten()
        x[r] = z[r]
        x[r, torch.randint(cols, (len(r),), generator=g, device=device)] = 60.0
        r = torch.nonzero(pick("spike")).flatten()
        x[r] = z[r]
        at = torch.randint(cols, (len(r),), generator=g, device=device)
        at[::2] = cols - 1  # every other spike row: the spike in the last column
        x[r, at] = 100.0
        r = torch.nonzero(pick("neginf")).flatten()
        drop = torch.rand(len(r), cols, generator=g, device=device) < 0.3
        drop[:, 0] = True  # a row that starts with -inf: a running max starts at -inf, too
        keep = torch.randint(min(1, cols - 1), cols, (len(r),), generator=g, device=device)
        drop[torch.arange(len(r), device=device), keep] = False  # one entry stays finite
        x[r] = x[r].masked_fill(drop, float("-inf"))
    return {"x": x.to(getattr(torch, case.dtype))}


def reference(inputs):
    """float64 softmax of the float32 input, on the input's device."""
    import torch
    x = torch.as_tensor(inputs["x"]).to(torch.float64)
    return torch.softmax(x, dim=-1)


def _row_kind(case: Case, r: int) -> str:
    return f"row kind '{KINDS[r % len(KINDS)]}'" if case.kind == "adversarial" else "random row"


def verify(out, ref, inputs, case: Case, kernel: bool = True) -> list[str]:
    """Problems of a softmax output; `kernel=False` words them for a NumPy function."""
    import torch
    if out is None:
        return ["nothing was returned"]
    y = torch.as_tensor(out)
    if tuple(y.shape) != tuple(ref.shape):
        return [f"output shape {tuple(y.shape)}, expected {tuple(ref.shape)}"]
    want = getattr(torch, case.dtype)
    if y.dtype != want:
        return [f"output dtype {y.dtype}, expected {want} (the input's dtype)"]
    rtol, atol, sum_tol = TOLERANCES[case.dtype]
    yd = y.to(ref.device, torch.float64)
    nan = torch.isnan(yd)
    if nan.any():
        r, c = (int(i) for i in torch.nonzero(nan)[0])
        where = f"y[{r}, {c}] is NaN ({int(nan.sum())} NaNs in all; {_row_kind(case, r)})"
        if not kernel:
            return [f"{where}: your function computed a NaN (0/0 or inf/inf: did you subtract the row "
                    "max before exp? what is e^(x - max) for a row whose max is -inf?)"]
        return [f"{where}: it was never written (outputs start as NaN), or the kernel made a NaN (0/0 or "
                "inf/inf: did you subtract the row max? e^(-inf - (-inf)) on a lane that has seen only -inf?)"]
    err = (yd - ref).abs()
    tol = rtol * ref.abs() + atol
    bad = ~(err <= tol)  # NaN fails closed
    if bad.any():
        r, c = (int(i) for i in torch.nonzero(bad)[0])
        return [f"y[{r}, {c}] = {yd[r, c]:.8g}, expected {ref[r, c]:.8g} (|error| {err[r, c]:.2g} > "
                f"tolerance {tol[r, c]:.2g}; {_row_kind(case, r)}); {int(bad.sum())} of {bad.numel()} "
                f"elements are off, max |error| {err.max():.3g}"]
    sums = yd.sum(dim=-1)
    off = ~((sums - 1).abs() <= sum_tol + y.shape[-1] * atol)
    if off.any():
        r = int(torch.nonzero(off)[0][0])
        return [f"row {r} sums to {sums[r]:.8g}, not 1"]
    return []


# ---- 1. NumPy safe softmax (CPU, graded everywhere) ----

def _run_numpy(ns, inputs, outs):
    x = inputs["x"].cpu().numpy().copy()
    x.setflags(write=False)
    y = ns["safe_softmax"](x)
    return np.asarray(y)


register(Exercise(
    id="ch01.safe_softmax",
    chapter="ch01_softmax",
    title="Safe softmax in NumPy",
    entry=("safe_softmax",),
    kind="python",
    spec="safe_softmax(x: np.ndarray[float32, (rows, cols)]) -> np.ndarray[float32, (rows, cols)], "
         "softmax along the last axis; x is read-only",
    cases={
        "correctness": [Case((4, 10), "adversarial"), Case((1, 1)), Case((3, 1000), "adversarial")],
        "hidden": [Case((1823, 781), "adversarial", cpu_shape=(223, 781)),
                   Case((7, 3), "adversarial"), Case((2, 65536))],
    },
    make_inputs=lambda case, shape, gen, device: make_inputs(case, shape, gen, "cpu"),
    reference=reference,
    run=_run_numpy,
    verify=lambda out, ref, inputs, case: verify(out, ref, inputs, case, kernel=False),
    solution="kernels_ref/ch01_softmax/safe_softmax.py",
    edges=(Edge("every row kind", "each adversarial row kind in one case", kinds=("adversarial",),
                min_rows=len(KINDS)),
           Edge("one element", "a (1, 1) input", widths=(1,))),
    timeout_s={"cpu": 60, "gpu": 60},
))


# ---- 2. Triton row softmax ----

def _run_triton(ns, inputs, outs):
    import torch
    x = inputs["x"]
    y = outs.tensor(x.shape, torch.float32)
    ns["softmax_triton"](x, y)
    return y


def _softmax_bytes(shape) -> int:
    rows, cols = shape
    return 2 * rows * cols * 4


# The GPU kernels' cases: visible widths up to 1024, hidden ones past it (1025, 8192) and awkward.
KERNEL_CASES = {
    "correctness": [Case((64, 1000), "adversarial"), Case((8, 1)), Case((5, 3), "adversarial"),
                    Case((16, 1024))],
    "hidden": [Case((1823, 781), "adversarial", cpu_shape=(223, 781)),
               Case((33, 1)), Case((7, 3), "adversarial"),
               Case((257, 1025), "adversarial"), Case((4096, 8192), "adversarial", cpu_shape=(40, 8192))],
}

# Edge classes the quiet checks must cover (tests/test_mutation.py checks it, in both modes).
ROW_KIND_EDGE = Edge("every row kind", "each adversarial kind in one case: overflow, -inf entries, constant, "
                     "dominant, underflow, a spike a partial max misses", kinds=("adversarial",),
                     min_rows=len(KINDS))
KERNEL_EDGES = (
    ROW_KIND_EDGE,
    Edge("one column", "a row of one element: every lane but one is padding", widths=(1,)),
    Edge("a few columns", "a tile or block that is almost all padding", widths=(3,)),
    Edge("one past 1024", "one column past a power-of-two tile and 4 x 256 threads: the tail", widths=(1025,)),
    Edge("long rows", "rows longer than any one tile a kernel may assume", widths=(8192,)),
)

SOFTMAX_BENCH = Bench(shape=(8192, 8192), nbytes=_softmax_bytes,
                      model="read x once + write y once = 2 · rows · cols · 4 B")

register(Exercise(
    id="ch01.softmax_triton",
    chapter="ch01_softmax",
    title="Triton row softmax",
    entry=("softmax_triton",),
    kind="triton",
    spec="softmax_triton(x, y): x and y float32 (rows, cols) tensors on the course device, rows "
         "contiguous; write softmax(x) along each row into y with your own Triton kernel",
    cases=KERNEL_CASES,
    make_inputs=make_inputs,
    reference=reference,
    run=_run_triton,
    verify=verify,
    solution="kernels_ref/ch01_softmax/softmax_triton.py",
    bench=SOFTMAX_BENCH,
    edges=KERNEL_EDGES,
    timeout_s={"cpu": 60, "gpu": 60},
))


# ---- 3. CUDA 3-pass softmax ----

def _run_cuda(ns, inputs, outs):
    import torch
    x = inputs["x"]
    rows, cols = x.shape
    y = outs.tensor(x.shape, torch.float32)
    ns["softmax_3pass"]((rows,), (CUDA_THREADS,), (x, y, rows, cols))
    return y


register(Exercise(
    id="ch01.softmax_cuda",
    chapter="ch01_softmax",
    title="CUDA 3-pass softmax",
    entry=("softmax_3pass",),
    kind="cuda",
    spec=f"extern \"C\" __global__ void softmax_3pass(const float* x, float* y, int rows, int cols), "
         f"launched by the grader with one block of {CUDA_THREADS} threads per row",
    cases=KERNEL_CASES,
    make_inputs=make_inputs,
    reference=reference,
    run=_run_cuda,
    verify=verify,
    solution="kernels_ref/ch01_softmax/softmax_3pass.cu",
    bench=SOFTMAX_BENCH,
    edges=KERNEL_EDGES,
    timeout_s={"cpu": 60, "gpu": 60},
))
