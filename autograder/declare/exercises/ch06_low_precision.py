"""Chapter 6 · Low precision: the integer (fixed-point) softmax (Exercises 1-2), and softmax of bfloat16 or fp8
logits with float32 statistics (Exercise 3).

The integer softmax:

Both exercises compute, for an int8 tensor x of shape (rows, cols) and a real input scale s given as an
integer `multiplier` in [2^30, 2^31) and a `shift` in [1, 30] (s = multiplier · 2^(shift - 57)), the int8
softmax q = clamp(round(256 · softmax(s · x)) - 128, -128, 127) by the chapter's integer algorithm:

  1. m = max of the row; diff = x - m in [-255, 0].
  2. z = rshift_round(diff · multiplier, 31 - shift): diff · s in Q5.26 (26 fraction bits).
  3. e = exp_neg_q31(z): e^z in Q0.31; z = 0 gives 2^31 - 1 (1.0 does not fit); z < -2^31 (below -32)
     gives 0. Otherwise r = (z mod 2^24) - 2^24 in [-1/4, 0), R = r - z (a multiple of 1/4 in [0, 32)),
     e^r by the degree-4 Taylor polynomial in Horner form with Q0.31 coefficients 1/0!, ..., 1/4!, then one multiply
     by EXP_NEG_QUARTERS[j] = e^(-2^j / 4) for each bit 24 + j (j = 0..6) set in R.
  4. S = sum of rshift_round(e, 12) over the row (Q12.19; 64-bit: a constant row of 4096 sums to 2^31).
  5. L = bit length of S (`k` in the code); u = (S << 31) >> L = S / 2^L in [1/2, 1) as Q0.31 (exact).
     Y = 48/17 - 32/17 · u in Q2.29, then three Newton steps Y <- Y (2 - u Y): Y = 1/u in Q2.29.
  6. P = mul_q31(e, Y); q = rshift_round(P, 2 + L) - 128, clamped to [-128, 127].
where rshift_round(v, n) = (v + 2^(n-1)) >> n (round half up) and mul_q31(a, b) = rshift_round(a · b, 31).

Grading is bit-exact against `reference`, which is written in NumPy int64 only (no float reaches it: the
judge's float scale becomes the integers multiplier/shift in make_inputs, and everything after is integer).

Floating point in the student's code. NumPy: x arrives as a read-only int8 array of a subclass that fails
the call at the first NumPy operation on it (or on anything computed from it) whose result is floating
point, and on astype to a float dtype. It cannot see Python floats (float(x[0])) or arrays made with
np.array(x) / np.asarray(x), which drop the subclass: the detection is best effort, the bit-exact check
is not. CUDA: the judge compiles the kernel's cell to PTX itself (NVRTC, for several GPU generations: never in the
runner, whose memory is the student's; autograder.judge.source_checks) and any f16/bf16/f32/f64 instruction or
register fails the exercise: a complete check for the kernel's own code.

Outputs. The engine's guarded output factory (autograder.runner.execute.Outputs) makes floating-point buffers
only (its canary and NaN poison need a float dtype), so the CUDA kernel's int8 output lives in a float32
guarded buffer of ceil(rows · cols / 4) elements, viewed as int8: the canary zones either side catch
out-of-bounds writes as usual, the bytes between the last element and the end of the last float must
keep the NaN poison (checked), and an unwritten element keeps a NaN byte (0, 0, -64 or 127) that the
bit-exact comparison rejects unless that byte happens to be the right answer.

Inputs. "randn" rows: round(N(0, σ²)) clipped to int8, σ in [4, 60]. "adversarial" rows cycle through:
  0 uniform:    uniform in [-128, 127] (wide: with a large scale most entries fall below -32 and give 0)
  1 dominant:   -128 everywhere and one 127 (p ~ 1: 256 · p rounds to 256, which int8 cannot hold)
  2 constant:   one value (p = 1/cols; a 4096-wide constant row sums to 2^31, past int32)
  3 boundary:   random, plus entries at the last diff that fits Q5.26 (z = -2^31 or just above) and one
                past it (z < -2^31, exp 0)
  4 ties:       values within 3 of each other, several equal to the max
  5 small:      values near -128 (the max is negative: a max started at 0 is wrong)
The scale s is drawn per case: log-uniform in [2^-5, 1] for randn cases; for adversarial cases either
s = 1/4 exactly (diff = -128 is then exactly -32 = -2^31 in Q5.26) or log-uniform in [2^-3, 1], where a
max started at 0 (the integer cousin of FLT_MIN) shows on the 'small' rows (their exponentials then fall
below what Q12.19 keeps) instead of being masked by softmax's shift invariance.
"""
from __future__ import annotations

import numpy as np

from autograder.declare.exercise import Bench, Case, Edge, Exercise

EXERCISES: list = []  # this chapter's exercises, in notebook order: the registry collects them
register = EXERCISES.append

KINDS = ("uniform", "dominant", "constant", "boundary", "ties", "small")
CUDA_THREADS = 256  # launch contract: one block of 256 threads per row
MAX_COLS = 4096     # the contract's longest row (the Q12.19 sum of 4096 ones is 2^31)

# e^(-2^j / 4) in Q0.31 for j = 0..6 (e^-1/4, e^-1/2, e^-1, e^-2, e^-4, e^-8, e^-16), rounded to nearest
EXP_NEG_QUARTERS = (1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242)
ONE_Q31 = 1 << 31
TAYLOR_Q31 = (ONE_Q31, ONE_Q31, 1073741824, 357913941, 89478485)  # 1/0!, 1/1!, ..., 1/4! in Q0.31
NEWTON_A, NEWTON_B = 1515870810, 1010580540  # 48/17 and 32/17 in Q2.29
ACCUM_BITS = 12
NEWTON_STEPS = 3


# ---- the integer reference (int64 NumPy; no floating point) ----

def _rshift_round(v, n):
    return (v + (np.int64(1) << np.int64(n - 1))) >> np.int64(n)


def _answer_key_reference(newton_steps: int = NEWTON_STEPS):
    """The chapter's algorithm, built as a closure: once the runner drops `reference` (worker scrub),
    nothing left in this module computes it (the factory itself is deleted below). It is the answer to
    the exercises, so the student pack replaces it (autograder.instructor.student_pack.strip_answer_keys)."""
    rshift = _rshift_round

    def mul(a, b):
        return rshift(a * b, 31)

    def exp_neg(z):  # e^z in Q0.31 for z <= 0 in Q5.26
        frac = (z & ((1 << 24) - 1)) - (1 << 24)   # [-1/4, 0)
        whole = frac - z                            # multiple of 1/4 in [0, 32): bits 24..30
        frac31 = frac * 32
        acc = np.full_like(z, TAYLOR_Q31[-1])
        for c in TAYLOR_Q31[-2::-1]:
            acc = c + mul(frac31, acc)
        for j, c in enumerate(EXP_NEG_QUARTERS):
            acc = np.where((whole >> (24 + j)) & 1, mul(acc, np.int64(c)), acc)
        acc = np.where(z == 0, ONE_Q31 - 1, acc)
        return np.where(z < -(1 << 31), 0, acc)

    def bit_length(v):
        n = np.zeros_like(v)
        rest = v.copy()
        while (rest > 0).any():
            n += rest > 0
            rest >>= 1
        return n

    def softmax(x, multiplier: int, shift: int):
        x = np.asarray(x).astype(np.int64)
        e = exp_neg(rshift((x - x.max(axis=-1, keepdims=True)) * np.int64(multiplier), 31 - shift))
        total = rshift(e, ACCUM_BITS).sum(axis=-1, keepdims=True)
        k = bit_length(total)
        d = (total << 31) >> k
        inv = NEWTON_A - mul(d, np.int64(NEWTON_B))
        for _ in range(newton_steps):
            inv = rshift(inv * ((2 << 29) - mul(d, inv)), 29)
        return np.clip(rshift(mul(e, inv), 2 + k) - 128, -128, 127).astype(np.int8)

    def reference(inputs):
        return softmax(_as_numpy(inputs["x"]), int(inputs["multiplier"]), int(inputs["shift"]))

    return reference


reference = _answer_key_reference()
del _answer_key_reference


def _as_numpy(x):
    return x.cpu().numpy() if hasattr(x, "cpu") else np.asarray(x)


# ---- inputs ----

def scale_to_multiplier(s: float) -> tuple[int, int]:
    """(multiplier, shift) with s = multiplier · 2^(shift - 57), multiplier in [2^30, 2^31)."""
    import math
    e = math.floor(math.log2(s))
    m = round(s * 2.0 ** (30 - e))
    if m == 1 << 31:
        m, e = 1 << 30, e + 1
    return m, 27 + e


def multiplier_to_scale(multiplier: int, shift: int) -> float:
    return multiplier * 2.0 ** (shift - 57)


def _last_diff_in_range(multiplier: int, shift: int) -> int:
    """The most negative diff in [-255, 0] whose z is still >= -2^31 (none below: -255)."""
    d = 0
    while d > -255 and int(_rshift_round(np.int64(d - 1) * multiplier, 31 - shift)) >= -(1 << 31):
        d -= 1
    return d


def make_inputs(case: Case, shape, gen, device):
    import torch
    rows, cols = shape
    seed = int(torch.randint(2**62, (1,), generator=gen))
    rng = np.random.default_rng(seed)
    if case.kind == "adversarial":  # scales where a wrong max or a lost bit shows in every row kind
        s = 0.25 if seed % 2 else float(2.0 ** rng.uniform(-3, 0))
    else:
        s = float(2.0 ** rng.uniform(-5, 0))
    multiplier, shift = scale_to_multiplier(s)
    sigma = rng.uniform(4, 60, size=(rows, 1))
    x = np.clip(np.rint(rng.standard_normal((rows, cols)) * sigma), -128, 127)
    if case.kind == "adversarial":
        edge = _last_diff_in_range(multiplier, shift)
        for r in range(rows):
            kind = KINDS[r % len(KINDS)]
            if kind == "uniform":
                x[r] = rng.integers(-128, 128, cols)
            elif kind == "dominant":
                x[r] = -128
                x[r, rng.integers(cols)] = 127
            elif kind == "constant":
                x[r] = rng.integers(-128, 128)
            elif kind == "boundary":
                x[r] = rng.integers(-128, 128, cols)
                spots = rng.permutation(cols)
                x[r, spots[0]] = 127
                for j, d in zip(spots[1:], (edge, edge - 1, edge + 1)):
                    x[r, j] = max(-128, 127 + d)
            elif kind == "ties":
                top = rng.integers(-125, 128)
                x[r] = top - rng.integers(0, 4, cols)
                x[r, rng.permutation(cols)[:max(1, cols // 4)]] = top
            elif kind == "small":
                x[r] = -128 + rng.integers(0, 20, cols)
    t = torch.from_numpy(x.astype(np.int8))
    return {"x": t if device == "cpu" else t.to(device), "multiplier": multiplier, "shift": shift}


# ---- checks ----

def _row_kind(case: Case, r: int) -> str:
    return f"row kind '{KINDS[r % len(KINDS)]}'" if case.kind == "adversarial" else "random row"


def verify(out, ref, inputs, case: Case) -> list[str]:
    """Bit-exact: every int8 output equal to the integer reference's."""
    if out is None:
        return ["nothing was returned"]
    y = _as_numpy(out)
    if y.dtype != np.int8:
        return [f"output dtype {y.dtype}, expected int8 (values in [-128, 127])"]
    if y.shape != ref.shape:
        return [f"output shape {tuple(y.shape)}, expected {tuple(ref.shape)}"]
    bad = y != ref
    if bad.any():
        r, c = (int(i) for i in np.argwhere(bad)[0])
        off = np.abs(y.astype(np.int64) - ref.astype(np.int64))
        x = _as_numpy(inputs["x"])
        hint = ""
        if ref[r, c] == 127 and y[r, c] == -128:
            hint = " (256 · p rounded to 256 and wrapped: clamp to [-128, 127] before converting to int8)"
        elif int(off.max()) == 1:
            hint = (" (off by one step: a rounding shift (v + 2^(n-1)) >> n where a plain >> floors, the "
                    "Newton iterations, or the order of the roundings?)")
        return [f"q[{r}, {c}] = {int(y[r, c])}, expected {int(ref[r, c])} (x[{r}, {c}] = {int(x[r, c])}, row max "
                f"{int(x[r].max())}, multiplier {int(inputs['multiplier'])}, shift {int(inputs['shift'])}; "
                f"{_row_kind(case, r)}); {int(bad.sum())} of {bad.size} outputs differ, by up to "
                f"{int(off.max())} step(s){hint}"]
    return []


# ---- 1. NumPy, integers only ----

class FloatingPointUsed(AssertionError):
    pass


def _no_float(result, what: str):
    for v in result if isinstance(result, tuple) else (result,):
        dt = getattr(v, "dtype", None)
        if dt is not None and dt.kind in "fc":
            from autograder.boundary.guards import Failure
            raise Failure(f"floating point in your function: {what} produced {dt} values; the exercise "
                          "asks for integer arithmetic only (shifts, integer multiplies, adds)")
        if isinstance(v, float):
            from autograder.boundary.guards import Failure
            raise Failure(f"floating point in your function: {what} produced a Python float")


class IntOnlyArray(np.ndarray):
    """An int8 input that fails the call at the first floating-point result computed from it."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        args = [a.view(np.ndarray) if isinstance(a, IntOnlyArray) else a for a in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, IntOnlyArray) else o for o in kwargs["out"])
        result = getattr(ufunc, method)(*args, **kwargs)
        _no_float(result, f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}"))
        return _wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        result = super().__array_function__(func, types, args, kwargs)
        _no_float(result, f"np.{func.__name__}")
        return _wrap(result)

    def astype(self, dtype, *args, **kwargs):
        if np.dtype(dtype).kind in "fc":
            _no_float(np.empty(0, dtype), f"astype({np.dtype(dtype)})")
        return super().astype(dtype, *args, **kwargs)


def _wrap(result):
    if isinstance(result, tuple):
        return tuple(_wrap(r) for r in result)
    if type(result) is np.ndarray:
        return result.view(IntOnlyArray)
    return result


def _run_numpy(ns, inputs, outs):
    x = _as_numpy(inputs["x"]).copy()
    x.setflags(write=False)
    y = ns["softmax_int8"](x.view(IntOnlyArray), int(inputs["multiplier"]), int(inputs["shift"]))
    return np.asarray(y)


NUMPY_EDGES = (
    Edge("every row kind", "each adversarial kind in one case: saturation, p ~ 1, constant, the Q5.26 "
         "boundary, ties, a negative max", kinds=("adversarial",), min_rows=len(KINDS)),
    Edge("one element", "a row of one element: p = 1 exactly", widths=(1,)),
)

register(Exercise(
    id="ch06.softmax_int8_numpy",
    chapter="ch06_low_precision",
    title="Integer softmax in NumPy",
    entry=("softmax_int8",),
    kind="python",
    spec="softmax_int8(x: np.ndarray[int8, (rows, cols)], multiplier: int, shift: int) -> "
         "np.ndarray[int8, (rows, cols)], integer arithmetic only, bit-exact to the chapter's algorithm; "
         f"x is read-only; cols <= {MAX_COLS}",
    cases={
        "correctness": [Case((24, 10), "adversarial"), Case((1, 1)), Case((32, 16))],
        "hidden": [Case((61, 257), "adversarial"), Case((6, MAX_COLS), "adversarial"), Case((7, 3), "adversarial"),
                   Case((200, 1000))],
    },
    make_inputs=lambda case, shape, gen, device: make_inputs(case, shape, gen, "cpu"),
    reference=reference,
    run=_run_numpy,
    verify=verify,
    solution="kernels_ref/ch06_low_precision/softmax_int8.py",
    edges=NUMPY_EDGES,
    timeout_s={"cpu": 60, "gpu": 60},
))


# ---- 2. CUDA, integers only ----

def _run_cuda(ns, inputs, outs):
    import torch

    kernel = ns["softmax_int8_cuda"]  # (no floating point: the judge checked the cell's text: source_checks)
    x = inputs["x"]
    rows, cols = x.shape
    buf = outs.tensor(((rows * cols + 3) // 4,), torch.float32)  # int8 output in a float32 guarded buffer
    y = buf.view(torch.int8)
    kernel((rows,), (CUDA_THREADS,), (x, y, rows, cols, int(inputs["multiplier"]), int(inputs["shift"])))
    return buf


NAN_BYTES = np.array([0, 0, -64, 127], dtype=np.int8)  # float32 NaN (0x7fc00000), little-endian, as int8


def verify_cuda(out, ref, inputs, case: Case) -> list[str]:
    if out is None:
        return ["nothing was returned"]
    raw = _as_numpy(out)
    n = ref.size
    if raw.dtype != np.float32 or raw.size != (n + 3) // 4:
        return [f"the output buffer is {raw.dtype} x {raw.size}, not the grader's float32 x {(n + 3) // 4}"]
    b = raw.view(np.int8)
    tail = b[n:]
    if (tail != NAN_BYTES[n % 4:n % 4 + len(tail)]).any():
        return [f"out-of-bounds write: byte(s) just past the last output (y[{n}] and on) were written; check "
                "your index bounds"]
    return verify(b[:n].reshape(ref.shape), ref, inputs, case)


CUDA_EDGES = NUMPY_EDGES + (
    Edge("a few columns", "a block that is almost all idle threads", widths=(3,)),
    Edge("one past 256", "one column past the block: the strided loop's tail", widths=(257,)),
    Edge("the longest row", f"{MAX_COLS} columns: a constant row sums to 2^31, past int32", widths=(MAX_COLS,)),
)

register(Exercise(
    id="ch06.softmax_int8_cuda",
    chapter="ch06_low_precision",
    title="Integer softmax in CUDA",
    entry=("softmax_int8_cuda",),
    kind="cuda",
    spec="extern \"C\" __global__ void softmax_int8_cuda(const signed char* x, signed char* y, int rows, int cols, "
         f"int multiplier, int shift), launched with one block of {CUDA_THREADS} threads per row; integer "
         f"arithmetic only; cols <= {MAX_COLS}",
    cases={
        "correctness": [Case((24, 100), "adversarial"), Case((4, 1)), Case((32, 16))],
        "hidden": [Case((13, 257), "adversarial"), Case((6, MAX_COLS), "adversarial"), Case((7, 3), "adversarial"),
                   Case((40, 1000))],
    },
    make_inputs=make_inputs,
    reference=reference,
    run=_run_cuda,
    verify=verify_cuda,
    solution="kernels_ref/ch06_low_precision/softmax_int8.cu",
    edges=CUDA_EDGES,
    source_checks=("no_floating_point",),
    timeout_s={"cpu": 90, "gpu": 60},
))


# ---- Part 2 · 3. Softmax of bfloat16 or fp8 logits, float32 statistics, in Triton ----
#
# The logits of a row are z = x · scale[row], with x stored in bfloat16 or fp8 E4M3 (the judge draws real
# logits z, picks a scale per row and rounds z / scale to the storage format; for fp8 the scale is the row's
# largest |z| / 448, so the row uses fp8's whole range) and the probabilities are written in bfloat16. The
# reference is the float64 softmax of the stored x times the scale: what the kernel is asked is exactly that
# softmax, with every statistic in float32, and one rounding to bfloat16 at the end. The tolerance: one
# rounding to nearest costs at most half a bfloat16 ulp of the value (8 significant bits: the ulp of a value
# in [2^k, 2^(k+1)) is 2^(k-7)), plus a float32 computation's own error (z = x * scale rounded to float32 is off
# by up to |z| 2^-24, and e^(z - m) turns that into a relative error up to about 5e-5 for logits near 200:
# 1e-4 relative, still 40 times below a bfloat16 ulp). In CPU mode the Triton interpreter truncates float32 to bfloat16
# where a GPU rounds to nearest: one ulp there (as in Chapter 5). Probabilities below float32's smallest normal
# number, 2^-126, are float32 subnormals (GPUs' fast exp flushes them to 0): an absolute 2^-126 more.

def _ulp_at(ref, bits: int):
    """The ulp of a format with `bits` significant bits at each |ref| (2^(k+1-bits) in [2^k, 2^(k+1));
    below float32's smallest normal, 2^-126, that of 2^-126)."""
    import torch
    _, e = torch.frexp(ref.abs().clamp_min(2.0 ** -126))
    return torch.ldexp(torch.ones_like(ref), (e - bits).to(torch.int32))


LOWP_KINDS = ("big", "masked", "constant", "dominant", "spread", "tiny", "wide")
LOWP_MAX_COLS = 16384
E4M3_MAX = 448.0


def _lowp_logits(case: Case, shape, gen, device):
    """Real logits z (float64): N(0, σ²) rows with σ in [0.5, 8] ("randn"), or the adversarial kinds cycled
    over the rows: big (around 100: e^z overflows float32 without the max), masked (a third of the entries
    -inf, as an attention mask makes them; in fp8, which has no infinity, -30 instead), constant, dominant
    (one entry 40 above the rest), spread (σ = 30: most probabilities far below the largest), tiny (σ = 1e-3:
    every probability near 1/cols, where a padding lane that adds e^0 shows) and wide (σ = 4, but in bfloat16
    stored with the scale 2^-14: values up to about 2.6e5, which bfloat16 holds and float16, whose largest is
    65504, does not: a kernel that widens through float16 fails there)."""
    import torch
    rows, cols = shape
    g = torch.Generator(device="cpu").manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    base = torch.randn(rows, cols, generator=g, dtype=torch.float64)
    if case.kind != "adversarial":
        return base * (0.5 + 7.5 * torch.rand(rows, 1, generator=g, dtype=torch.float64))
    z = torch.empty_like(base)
    for r in range(rows):
        kind = LOWP_KINDS[r % len(LOWP_KINDS)]
        b = base[r]
        if kind == "big":
            z[r] = 100.0 + 20.0 * b
        elif kind == "masked":
            z[r] = 4.0 * b
            hide = torch.rand(cols, generator=g) < 1 / 3
            hide[int(torch.randint(0, cols, (1,), generator=g))] = False  # at least one entry stays
            z[r][hide] = -float("inf") if case.dtype != "float8_e4m3fn" else -30.0
        elif kind == "constant":
            z[r] = 3.0
        elif kind == "dominant":
            z[r] = -20.0
            z[r, int(torch.randint(0, cols, (1,), generator=g))] = 20.0
        elif kind == "spread":
            z[r] = 30.0 * b
        elif kind == "tiny":
            z[r] = 1e-3 * b
        else:
            z[r] = 4.0 * b
    return z


def lowp_inputs(case: Case, shape, gen, device):
    import torch
    z = _lowp_logits(case, shape, gen, device)
    finite = torch.where(torch.isfinite(z), z.abs(), torch.zeros_like(z))
    if case.dtype == "float8_e4m3fn":
        scale = (finite.amax(-1) / E4M3_MAX).clamp_min(1e-30)  # the row's largest |z| maps to 448
    else:  # a scale for bfloat16 too, so that a kernel that ignores it fails on both formats
        scale = torch.exp2(torch.rand(shape[0], generator=gen, dtype=torch.float64) * 2 - 1)  # in [1/2, 2)
        if case.kind == "adversarial":
            scale[LOWP_KINDS.index("wide")::len(LOWP_KINDS)] = 2.0 ** -14
    dt = getattr(torch, case.dtype or "bfloat16")
    scale = scale.to(torch.float32)
    x = (z / scale.double()[:, None]).to(dt)
    return {"x": x.to(device), "scale": scale.to(device)}


def lowp_reference(inputs):
    import torch
    z = inputs["x"].to(torch.float64) * inputs["scale"].to(torch.float64)[:, None]
    return torch.softmax(z, dim=-1)


def _lowp_run(ns, inputs, outs):
    import torch
    x = inputs["x"]
    y = outs.tensor(x.shape, torch.bfloat16)
    ns["softmax_lowp"](x, inputs["scale"], y)
    return y


def lowp_verify(out, ref, inputs, case) -> list[str]:
    import torch
    y = out.to(ref.device).to(torch.float64)
    kinds = LOWP_KINDS if case.kind == "adversarial" else ("random",)
    if torch.isnan(y).any():
        r, c = (int(i) for i in torch.nonzero(torch.isnan(y))[0])
        return [f"y[{r}, {c}] is NaN (row kind '{kinds[r % len(kinds)]}'): never written (outputs start as NaN), "
                "or 0/0 or inf/inf: an exponential that overflowed float32 (did you subtract the row max?)"]
    from course import mode
    ulps = 0.5 if mode.GPU else 1.0
    ulp = _ulp_at(ref, 8)  # bfloat16's ulp at each reference value
    err = (y - ref).abs()
    # 1e-4: float32's own error, chiefly z = x * scale rounded to float32 (|z| 2^-24, about 1.2e-5 for logits near
    # 200), which e^(z - m) turns into a relative error twice that; below float32's smallest normal a GPU's exp
    # flushes to 0
    tol = ulps * ulp + 1e-4 * ref + 2.0 ** -126
    bad = ~(err <= tol)
    if bad.any():
        r, c = (int(i) for i in torch.nonzero(bad)[0])
        return [f"y[{r}, {c}] = {float(y[r, c]):.6g}, expected {float(ref[r, c]):.6g} = "
                f"{float(err[r, c] / ulp[r, c]):.2f} bfloat16 ulps off (row kind '{kinds[r % len(kinds)]}'; allowed "
                f"{ulps} ulp: {'rounded once' if ulps == 0.5 else 'the interpreter truncates'}); "
                f"{int(bad.sum())} of {bad.numel()} off"]
    return []


LOWP_EDGES = (
    Edge("every row kind", "overflow without the max, -inf entries, constant, dominant, spread, near-uniform rows, "
         "bfloat16 values past float16's range",
         kinds=("adversarial",), min_rows=len(LOWP_KINDS)),
    Edge("fp8 logits", "E4M3 inputs with the row scale that maps the largest |z| to 448",
         dtypes=("float8_e4m3fn",), kinds=("adversarial",), min_rows=len(LOWP_KINDS)),
    Edge("one column", "a row of one element: every lane but one is padding", widths=(1,)),
    Edge("one past 1024", "a power-of-two block with one real column in its last half", widths=(1025,)),
    Edge("the longest row", f"{LOWP_MAX_COLS} columns: the whole row in one program's registers",
         widths=(LOWP_MAX_COLS,)),
)

register(Exercise(
    id="ch06.softmax_lowp_triton",
    chapter="ch06_low_precision",
    title="Softmax of bfloat16 or fp8 logits with float32 statistics, in Triton",
    entry=("softmax_lowp",),
    kind="triton",
    spec="softmax_lowp(x, scale, y): x (rows, cols) bfloat16 or float8_e4m3fn, contiguous, cols up to "
         f"{LOWP_MAX_COLS}; scale (rows,) float32; the logits are z = x * scale[row]; write softmax(z) along each "
         "row into y (rows, cols) bfloat16 with your own Triton kernel; max, exp and sum in float32",
    cases={
        "correctness": [Case((64, 1000), "adversarial", dtype="bfloat16"), Case((8, 1), dtype="bfloat16"),
                        Case((64, 1000), "adversarial", dtype="float8_e4m3fn"),
                        Case((16, 4096), dtype="float8_e4m3fn")],
        "hidden": [Case((7, 3), "adversarial", dtype="bfloat16"), Case((257, 1025), "adversarial", dtype="bfloat16"),
                   Case((300, LOWP_MAX_COLS), "adversarial", dtype="bfloat16", cpu_shape=(12, LOWP_MAX_COLS)),
                   Case((33, 1), dtype="float8_e4m3fn"),
                   Case((100, 8192), "adversarial", dtype="float8_e4m3fn", cpu_shape=(12, 8192))],
    },
    make_inputs=lowp_inputs,
    reference=lowp_reference,
    run=_lowp_run,
    verify=lowp_verify,
    solution="kernels_ref/ch06_low_precision/softmax_lowp_triton.py",
    edges=LOWP_EDGES,
    bench=Bench(shape=(8192, 8192), nbytes=lambda s: s[0] * s[1] * (2 + 2) + 4 * s[0], dtype="bfloat16",
                model="read x once + write y once = rows · cols · (2 + 2) B (bfloat16 in and out), + 4 B of scale "
                      "per row", kind="randn", also=((16384, 4096),)),
    timeout_s={"cpu": 180, "gpu": 60},
))
