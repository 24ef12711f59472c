"""Chapter 1 · Softmax: NumPy safe softmax, Triton row softmax, CUDA 3-pass softmax.

Every softmax exercise computes y = softmax(x) along the last axis of a 2-D float32 x.

Inputs. "randn" rows are N(0, s²) with s drawn in [1, 10]. "adversarial" rows cycle
through five kinds that break a naive kernel:
  0 large:    values near +100 (exp overflows fp32 past 88.7)
  1 neginf:   some entries -inf (their output is exactly 0), at least one finite
  2 constant: all entries equal (output 1/cols everywhere)
  3 dominant: one entry 60 above the rest (output ~1 there, ~1e-26 elsewhere)
  4 small:    values near -100 (exp underflows to 0: 0/0 without the max)

Tolerance. Outputs are compared with a float64 softmax of the same fp32 input:
|y - ref| <= RTOL·|ref| + ATOL. RTOL = 1e-4 is about 1700 fp32 ulps: room for __expf
(its error grows with |x - max|, ~6e-6 relative at 100) and for a sequential fp32
sum over 16k terms (6e-5 measured on an H200), yet 5x tighter than fp16 rounding
(4.9e-4), so a kernel that computes exp or the sum in half precision fails. ATOL = 1e-9 only forgives values that
underflow fp32. Rows must also sum to 1 within 1e-4, which a zero output cannot.
"""
from __future__ import annotations

import numpy as np

from ..exercise import Bench, Case, Exercise
from ..registry import register

RTOL, ATOL, SUM_TOL = 1e-4, 1e-9, 1e-4
KINDS = ("large", "neginf", "constant", "dominant", "small")
CUDA_THREADS = 256  # launch contract of the CUDA exercise: one block of 256 threads per row


def make_inputs(case: Case, shape, gen, device):
    import torch
    rows, cols = shape
    z = torch.randn(rows, cols, generator=gen, dtype=torch.float64)
    scale = 1 + 9 * torch.rand(rows, 1, generator=gen, dtype=torch.float64)
    x = z * scale
    if case.kind == "adversarial":
        kind = torch.arange(rows) % len(KINDS)
        pick = lambda name: kind == KINDS.index(name)  # noqa: E731
        x[pick("large")] = 100 + 2 * z[pick("large")]
        x[pick("small")] = -100 + 2 * z[pick("small")]
        x[pick("constant")] = x[pick("constant")][:, :1].expand(-1, cols)
        r = torch.nonzero(pick("dominant")).flatten()
        x[r] = z[r]
        x[r, torch.randint(cols, (len(r),), generator=gen)] = 60.0
        r = torch.nonzero(pick("neginf")).flatten()
        drop = torch.rand(len(r), cols, generator=gen) < 0.3
        drop[torch.arange(len(r)), torch.randint(cols, (len(r),), generator=gen)] = False  # one stays finite
        x[r] = x[r].masked_fill(drop, float("-inf"))
    return {"x": x.to(torch.float32).to(device)}


def reference(inputs) -> np.ndarray:
    x = _numpy(inputs["x"]).astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)


def _numpy(t) -> np.ndarray:
    if isinstance(t, np.ndarray):
        return t
    return t.detach().cpu().numpy()


def _row_kind(case: Case, r: int) -> str:
    return f"row kind '{KINDS[r % len(KINDS)]}'" if case.kind == "adversarial" else "random row"


def verify(out, ref: np.ndarray, inputs, case: Case) -> list[str]:
    if out is None:
        return ["nothing was returned"]
    y = _numpy(out)
    if y.shape != ref.shape:
        return [f"output shape {y.shape}, expected {ref.shape}"]
    if y.dtype != np.float32:
        return [f"output dtype {y.dtype}, expected float32"]
    yd = y.astype(np.float64)
    nan = np.isnan(yd)
    if nan.any():
        r, c = (int(i) for i in np.argwhere(nan)[0])
        return [f"y[{r}, {c}] is NaN ({int(nan.sum())} NaNs in all; {_row_kind(case, r)}): it was never "
                "written (outputs start as NaN), or the kernel made a NaN (0/0 or inf/inf: did you "
                "subtract the row max?)"]
    err = np.abs(yd - ref)
    tol = RTOL * np.abs(ref) + ATOL
    bad = err > tol
    if bad.any():
        r, c = (int(i) for i in np.argwhere(bad)[0])
        return [f"y[{r}, {c}] = {yd[r, c]:.8g}, expected {ref[r, c]:.8g} (|error| {err[r, c]:.2g} > "
                f"tolerance {tol[r, c]:.2g}; {_row_kind(case, r)}); {int(bad.sum())} of {bad.size} "
                f"elements are off, max |error| {err.max():.3g}"]
    sums = yd.sum(axis=-1)
    off = np.abs(sums - 1) > SUM_TOL
    if off.any():
        r = int(np.argwhere(off)[0][0])
        return [f"row {r} sums to {sums[r]:.8g}, not 1"]
    return []


# ---- 1. NumPy safe softmax (CPU, graded everywhere) ----

def _run_numpy(ns, inputs, outs):
    x = _numpy(inputs["x"]).copy()
    x.setflags(write=False)
    y = ns["safe_softmax"](x)
    y = np.asarray(y)
    return y


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
        "hidden": [Case((1823, 781), "adversarial"), Case((7, 3), "adversarial"), Case((2, 65536))],
    },
    make_inputs=lambda case, shape, gen, device: make_inputs(case, shape, gen, "cpu"),
    reference=reference,
    run=_run_numpy,
    verify=verify,
    solution="kernels_ref/ch01_softmax/safe_softmax.py",
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
    cases={
        "correctness": [Case((64, 1000), "adversarial"), Case((8, 1)), Case((5, 3), "adversarial"),
                        Case((16, 1024))],
        "hidden": [Case((1823, 781), "adversarial"), Case((33, 1)), Case((7, 3), "adversarial"),
                   Case((257, 1025), "adversarial"), Case((4096, 8192), "adversarial", cpu_shape=(40, 8192))],
    },
    make_inputs=make_inputs,
    reference=reference,
    run=_run_triton,
    verify=verify,
    solution="kernels_ref/ch01_softmax/softmax_triton.py",
    bench=SOFTMAX_BENCH,
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
    cases={
        "correctness": [Case((64, 1000), "adversarial"), Case((8, 1)), Case((5, 3), "adversarial"),
                        Case((16, 1024))],
        "hidden": [Case((1823, 781), "adversarial"), Case((33, 1)), Case((7, 3), "adversarial"),
                   Case((257, 1025), "adversarial"), Case((4096, 8192), "adversarial")],
    },
    make_inputs=make_inputs,
    reference=reference,
    run=_run_cuda,
    verify=verify,
    solution="kernels_ref/ch01_softmax/softmax_3pass.cu",
    bench=SOFTMAX_BENCH,
    needs_gpu=True,
    timeout_s={"cpu": 60, "gpu": 60},
))
