"""Chapter 8 · The backward pass: softmax backward, RMSNorm and LayerNorm backward (dx per row, dgamma/dbeta across
rows in two deterministic stages) and the FlashAttention-2 backward, all in Triton.

Rows. Softmax: logits N(0, 3²) cycling through kinds: normal, one_hot (logits times 50), masked (half the logits
-inf, never a whole row) and constant (y = 1/cols); y = softmax(logits) rounded to the case's dtype, dy N(0, 10²).
Norms: Chapter 5's adversarial rows (mean 1e4, constant, spread 1e-6, values near 300, zeros, normal); gamma
1 + N(0, 0.5²); dy N(0, 1), every fifth row times 1000 (large gradients beside small ones). eps = 1e-5.

Tolerances (u: unit roundoff, 2^-24 float32; an ulp of the output's dtype; in CPU mode the interpreter truncates
float32 -> bfloat16, so one ulp there instead of half):
  softmax: the reference is y ∘ (dy - rowsum(dy ∘ y)) of the given (rounded) y and dy in float64; a float32 kernel
    errs by a few roundings of each term: 4u |y| (|dy| + Σ|y dy|), plus the output's rounding. Dropping the row sum,
    or a half-precision sum, is far outside.
  norms: float64 autograd of the forward on the given inputs. dx: the output's rounding plus 8 sqrt(cols) u times
    the row's terms r (|g| + mean|g| + |x̂| mean|g x̂|) (g = gamma dy), times (1 + max|x| r) for float32's rounding of
    x itself, which dominates where the mean is large. dgamma, dbeta: the output's rounding plus 64 u of the sum of
    |terms| (times 1 + max|x| r): float32 sums of a few thousand rows sit far inside; sums carried in bfloat16
    (8 bits: a sum of equal terms stalls after about 256 of them) do not.
  attention: FlashAttention's rule (Chapter 4): at most 2x the error of the same attention computed by PyTorch in the
    input's precision (each product and the softmax rounded to it), through autograd, against the float64 gradients,
    plus one rounding (u of the dtype) of the largest term of the gradient's formula with every term made positive
    (|dS| <= P (|dP| + |D|)): the floor where a gradient is exactly 0 (T = 1: dS = 0).

Memory (attention). The backward needs O(T) memory besides its inputs and outputs (L and D); the check fails at a
quarter of one head's T x T float32 matrix, on a kernel whose gradients are within 5% (precision is graded by the
correctness cells).

Throughput (attention). FLOPs = 10·B·H·T²·D (the five matrix products of the backward; causal: half), whatever the
kernel executes (the reference's separate dQ pass does 14·B·H·T²·D), against PyTorch's SDPA backward (flash
backend) on the same inputs, timed in the same run.

Bandwidth (softmax and norms). Bytes that must move: read y (or x) and dy, write dx: 3 · rows · cols · 2 B in
bfloat16. The norms' partial sums (2 · P · cols · 4 B per parameter) are the kernel's choice and not counted.
"""
from __future__ import annotations

import math

from autograder.declare.exercise import Bench, Case, Edge, Exercise, Memory
from autograder.declare.exercises.ch04_flash_attention import _qkv
from autograder.declare.exercises.ch05_fused_norms import EPS, ROW_KINDS, _gamma, _gen, _rows, _ulp

EXERCISES: list = []  # this chapter's exercises, in notebook order: the registry collects them
register = EXERCISES.append

U = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}
SOFTMAX_KINDS = ("normal", "one_hot", "masked", "constant")
HALF_BENCH = dict(shape=(16384, 4096), dtype="bfloat16", also=((65536, 1024),))


def _floor(dtype: str) -> float:
    """An absolute floor, far below any gradient that matters. float32 results below the normal range may be flushed
    to 0 (2^-126); float16 keeps its subnormals (one step, 2^-24); bfloat16 subnormals (a one-hot softmax row's tiny
    probabilities) came out several times 2^-126 off in the Triton interpreter (seen: 8.4e-38 for 1.6e-38), so
    2^-120 (7.5e-37) there."""
    return {"float32": 2.0**-126, "float16": 2.0**-24, "bfloat16": 2.0**-120}[dtype]


def _out_ulps(dtype: str) -> float:
    from course import mode
    return 1.0 if (dtype == "bfloat16" and not mode.GPU) else 0.5


def _compare(name, got, ref, tol, dtype: str, kinds=None, hint="") -> list[str]:
    """got against ref elementwise (tol a tensor or a number): NaN, shape, dtype and the first element off."""
    import torch
    if got is None:
        return [f"{name}: nothing was written"]
    got = torch.as_tensor(got)
    if tuple(got.shape) != tuple(ref.shape):
        return [f"{name}: shape {tuple(got.shape)}, expected {tuple(ref.shape)}"]
    if got.dtype != getattr(torch, dtype):
        return [f"{name}: dtype {got.dtype}, expected torch.{dtype}"]
    g = got.to(ref.device, torch.float64)
    kind = lambda idx: (f"; row kind '{kinds[idx[0] % len(kinds)]}'" if kinds and len(idx) == 2 else "")  # noqa: E731
    nan = torch.isnan(g)
    if nan.any():
        idx = tuple(int(i) for i in torch.nonzero(nan)[0])
        return [f"{name}{list(idx)} is NaN ({int(nan.sum())} NaNs{kind(idx)}): never written (outputs start as NaN), "
                f"or 0/0, inf - inf, inf · 0{hint}"]
    err = (g - ref).abs()
    bad = ~(err <= tol + _floor(dtype))
    if bad.any():
        idx = tuple(int(i) for i in torch.nonzero(bad)[0])
        t = tol[idx] if torch.is_tensor(tol) and tol.dim() else tol
        return [f"{name}{list(idx)} = {float(g[idx]):.8g}, expected {float(ref[idx]):.8g}: "
                f"|error| {float(err[idx]):.3g} > {float(t):.3g}{kind(idx)}; {int(bad.sum())} of {bad.numel()} "
                f"elements off{hint}"]
    return []


# ---- 1. Softmax backward ----

def _softmax_inputs(case: Case, shape, gen, device):
    import torch
    g = _gen(gen, device)
    dt = getattr(torch, case.dtype)
    rows, cols = shape
    x = 3 * torch.randn(rows, cols, generator=g, dtype=torch.float64, device=device)
    if "adversarial" in case.kind or case.kind == "strided":
        kind = torch.arange(rows, device=device) % len(SOFTMAX_KINDS)
        x[kind == 1] *= 50
        drop = (kind == 2)[:, None] & (torch.rand(rows, cols, generator=g, device=device) < 0.5)
        drop[:, 0] = False  # never a whole row
        x[drop] = -math.inf
        x[kind == 3] = 7.0
    y = torch.softmax(x, -1).to(dt)
    if case.kind == "strided":
        wide = torch.zeros(rows, cols + 24, dtype=dt, device=device)
        wide[:, 5:5 + cols] = y
        y = wide[:, 5:5 + cols]
    dy = (10 * torch.randn(rows, cols, generator=g, dtype=torch.float64, device=device)).to(dt)
    return {"y": y, "dy": dy}


def _softmax_reference(inputs):
    import torch
    y, dy = inputs["y"].to(torch.float64), inputs["dy"].to(torch.float64)
    return y * (dy - (y * dy).sum(-1, keepdim=True))


def _softmax_run(ns, inputs, outs):
    y = inputs["y"]
    dx = outs.tensor(y.shape, y.dtype)
    ns["softmax_backward"](y, inputs["dy"], dx)
    return dx


def _softmax_verify(out, ref, inputs, case) -> list[str]:
    import torch
    y, dy = (inputs[n].to(ref.device, torch.float64) for n in ("y", "dy"))
    # float32 arithmetic: a sum of `cols` terms in any order is within (cols - 1) u of the exact one (u = 2^-24;
    # a tree of per-thread chunks does better, but the order is the kernel's); dy - dot and the product add a few u.
    # (On an H200 a correct kernel's 512-term float32 rows exceed 4 u.) A sum carried in bf16 or fp16 is off by
    # about 2^-9 or 2^-12 of its terms per addition, far outside.
    cols = y.shape[-1]
    tol = 2.0**-24 * y.abs() * (4 * dy.abs() + (cols + 4) * (y * dy).abs().sum(-1, keepdim=True)) \
        + _out_ulps(case.dtype) * _ulp(ref, case.dtype)
    return _compare("dx", out, ref, tol, case.dtype, SOFTMAX_KINDS,
                    "; dx = y ∘ (dy - rowsum(dy ∘ y)), the row sum in float32")


ROW_EDGES = (
    Edge("one column", "a row of one element: its softmax is 1 and its gradient 0", widths=(1,)),
    Edge("past one power of two", "a width just past a power of two: most lanes of the block are padding",
         widths=(1025, 4097)),
    Edge("every dtype", "float32, float16 and bfloat16 inputs", dtypes=("float32", "float16", "bfloat16")),
)

register(Exercise(
    id="ch08.softmax_backward_triton",
    chapter="ch08_backward",
    title="Softmax backward in Triton",
    entry=("softmax_backward",),
    kind="triton",
    spec="softmax_backward(y, dy, dx): y, dy, dx (rows, cols) of one dtype (float32, float16 or bfloat16), cols up "
         "to 16384, rows of y and dy possibly strided (stride(0) >= cols); dx = y * (dy - sum(dy * y)) per row, the "
         "sum in float32, dx rounded once",
    cases={
        "correctness": [Case((64, 1000), "adversarial"), Case((8, 1), "adversarial", dtype="bfloat16"),
                        Case((16, 4096), "adversarial", dtype="bfloat16"), Case((12, 37), "strided", dtype="float16")],
        "hidden": [Case((7, 7), "adversarial", dtype="float16"), Case((9, 1025), "adversarial", dtype="bfloat16"),
                   Case((100, 8192), "adversarial", dtype="bfloat16", cpu_shape=(8, 8192)),
                   Case((3000, 512), "strided", cpu_shape=(40, 512)),
                   Case((5, 4097), "adversarial", dtype="float32")],
    },
    edges=ROW_EDGES,
    make_inputs=_softmax_inputs,
    reference=_softmax_reference,
    run=_softmax_run,
    verify=_softmax_verify,
    solution="kernels_ref/ch08_backward/softmax_backward_triton.py",
    bench=Bench(nbytes=lambda s: 3 * s[0] * s[1] * 2,
                model="read y and dy + write dx = 3 · rows · cols · 2 B (bf16)", **HALF_BENCH),
    timeout_s={"cpu": 180, "gpu": 60},
))


# ---- 2 and 3. RMSNorm and LayerNorm backward ----

def _norm_bwd_inputs(case: Case, shape, gen, device):
    import torch
    g = _gen(gen, device)
    dt = getattr(torch, case.dtype)
    rows, cols = shape
    x = _rows(case, shape, g, device).to(dt)
    gamma = _gamma(case, cols, g, device).to(dt)
    dy = torch.randn(rows, cols, generator=g, dtype=torch.float64, device=device)
    dy[torch.arange(rows, device=device) % 5 == 4] *= 1000
    return {"x": x, "gamma": gamma, "dy": dy.to(dt), "eps": EPS}


def _norm_grads(inputs, layer: bool):
    """float64 autograd of the forward on the given inputs: dx, dgamma (and dbeta)."""
    import torch
    x = inputs["x"].to(torch.float64).requires_grad_()
    g = inputs["gamma"].to(torch.float64).requires_grad_()
    b = torch.zeros_like(g, requires_grad=True)
    xc = x - x.mean(-1, keepdim=True) if layer else x
    y = xc * torch.rsqrt((xc * xc).mean(-1, keepdim=True) + EPS) * g + b
    y.backward(inputs["dy"].to(torch.float64))
    return {"dx": x.grad, "dgamma": g.grad, "dbeta": b.grad}


def _norm_tols(inputs, ref, dtype: str, layer: bool) -> dict:
    """Per-element tolerances (the derivation is in the module's docstring)."""
    import torch
    dev = ref["dx"].device
    x, gamma, dy = (inputs[n].to(dev, torch.float64) for n in ("x", "gamma", "dy"))
    xc = x - x.mean(-1, keepdim=True) if layer else x
    r = torch.rsqrt((xc * xc).mean(-1, keepdim=True) + EPS)
    xhat = xc * r
    g = (gamma * dy).abs()
    row = r * (g + g.mean(-1, keepdim=True) + xhat.abs() * (g * xhat.abs()).mean(-1, keepdim=True))
    big = 1 + x.abs().amax(-1, keepdim=True) * r  # float32's rounding of x, relative to the row's spread
    o = _out_ulps(dtype)
    return {"dx": o * _ulp(ref["dx"], dtype) + 8 * math.sqrt(x.shape[1]) * 2.0**-24 * row * big,
            "dgamma": o * _ulp(ref["dgamma"], dtype) + 64 * 2.0**-24 * (dy * xhat).abs().sum(0) * big.amax(),
            "dbeta": o * _ulp(ref["dbeta"], dtype) + 64 * 2.0**-24 * dy.abs().sum(0)}


def _norm_verify(out, ref, inputs, case, names) -> list[str]:
    tols = _norm_tols(inputs, ref, case.dtype, layer="dbeta" in names)
    hints = {"dx": "; dx per row: float32 reductions, rounded once",
             "dgamma": "; dgamma = column sums of dy ∘ x̂ over every row, carried in float32 and rounded once",
             "dbeta": "; dbeta = column sums of dy over every row, in float32"}
    for n in names:
        bad = _compare(n, out[n], ref[n], tols[n], case.dtype, ROW_KINDS if n == "dx" else None, hints[n])
        if bad:
            return bad
    return []


def _rms_bwd_run(ns, inputs, outs):
    x = inputs["x"]
    dx, dg = outs.tensor(x.shape, x.dtype), outs.tensor(x.shape[1:], x.dtype)
    ns["rmsnorm_backward"](x, inputs["gamma"], inputs["dy"], dx, dg, float(inputs["eps"]))
    return {"dx": dx, "dgamma": dg}


def _ln_bwd_run(ns, inputs, outs):
    x = inputs["x"]
    dx, dg, db = outs.tensor(x.shape, x.dtype), outs.tensor(x.shape[1:], x.dtype), outs.tensor(x.shape[1:], x.dtype)
    ns["layernorm_backward"](x, inputs["gamma"], inputs["dy"], dx, dg, db, float(inputs["eps"]))
    return {"dx": dx, "dgamma": dg, "dbeta": db}


NORM_CASES = {
    "correctness": [Case((64, 1000), "adversarial"), Case((8, 1), "adversarial", dtype="bfloat16"),
                    Case((96, 256), "adversarial", dtype="bfloat16"), Case((13, 4096), "adversarial")],
    "hidden": [Case((7, 7), "adversarial", dtype="bfloat16"), Case((300, 64), "adversarial", dtype="bfloat16"),
               Case((100, 8192), "adversarial_big_gamma", dtype="bfloat16", cpu_shape=(8, 8192)),
               Case((3000, 1024), "adversarial", dtype="bfloat16", cpu_shape=(60, 1024)),
               Case((5, 4097), "adversarial")],
}
NORM_EDGES = (
    Edge("one column", "a row of one element: x̂ = 0 (LayerNorm) or ±1 (RMSNorm)", widths=(1,)),
    Edge("past one power of two", "most lanes of the block are padding", widths=(4097,)),
    Edge("many rows per program", "dgamma's shares sum dozens of rows: a bfloat16 share loses bits",
         min_rows=96),
    Edge("every row kind", "mean 1e4, constant, spread 1e-6, near 300, zeros", kinds=("adversarial",), min_rows=6),
    Edge("both dtypes", "float32 and bfloat16", dtypes=("float32", "bfloat16")),
)
NORM_BENCH = Bench(nbytes=lambda s: 3 * s[0] * s[1] * 2,
                   model="read x and dy + write dx = 3 · rows · cols · 2 B (bf16); partial sums not counted",
                   **HALF_BENCH)

register(Exercise(
    id="ch08.rmsnorm_backward_triton",
    chapter="ch08_backward",
    title="RMSNorm backward in Triton",
    entry=("rmsnorm_backward",),
    kind="triton",
    spec="rmsnorm_backward(x, gamma, dy, dx, dgamma, eps): x, dy, dx (rows, cols) contiguous, gamma, dgamma (cols,), "
         "one dtype (float32 or bfloat16), cols up to 16384; dx and dgamma of y = x / sqrt(mean(x²) + eps) * gamma; "
         "float32 inside, dgamma summed over rows in float32 in a fixed order, each output rounded once",
    cases=NORM_CASES,
    edges=NORM_EDGES,
    make_inputs=_norm_bwd_inputs,
    reference=lambda inputs: _norm_grads(inputs, layer=False),
    run=_rms_bwd_run,
    verify=lambda out, ref, inputs, case: _norm_verify(out, ref, inputs, case, ("dx", "dgamma")),
    solution="kernels_ref/ch08_backward/rmsnorm_backward_triton.py",
    bench=NORM_BENCH,
    timeout_s={"cpu": 240, "gpu": 60},
))

register(Exercise(
    id="ch08.layernorm_backward_triton",
    chapter="ch08_backward",
    title="LayerNorm backward in Triton",
    entry=("layernorm_backward",),
    kind="triton",
    spec="layernorm_backward(x, gamma, dy, dx, dgamma, dbeta, eps): x, dy, dx (rows, cols) contiguous, gamma, dgamma, "
         "dbeta (cols,), one dtype (float32 or bfloat16), cols up to 16384; dx, dgamma and dbeta of y = (x - mean) / "
         "sqrt(var + eps) * gamma + beta (biased variance); float32 inside, column sums in float32 in a fixed order",
    cases=NORM_CASES,
    edges=NORM_EDGES,
    make_inputs=_norm_bwd_inputs,
    reference=lambda inputs: _norm_grads(inputs, layer=True),
    run=_ln_bwd_run,
    verify=lambda out, ref, inputs, case: _norm_verify(out, ref, inputs, case, ("dx", "dgamma", "dbeta")),
    solution="kernels_ref/ch08_backward/layernorm_backward_triton.py",
    bench=NORM_BENCH,
    timeout_s={"cpu": 240, "gpu": 60},
))


# ---- 4. FlashAttention-2 backward ----

def _heads(t):
    B, H, T, D = t.shape
    return t.reshape(B * H, T, D)


def _attn(q, k, v, causal):
    """Attention in q's dtype, op by op (each product and the softmax rounded to it), and the log-sum-exp."""
    import torch
    s = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
    if causal:
        T = s.shape[-1]
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=s.device).triu(1), -math.inf)
    return torch.softmax(s, -1) @ v, torch.logsumexp(s, -1)


def _chunks(T):
    return max(1, (1 << 26) // (T * T))  # heads per chunk: 512 MiB of float64 scores at most


def _fa_bwd_inputs(case: Case, shape, gen, device):
    """q, k, v, do in the case's dtype; o (rounded) and lse (float32) from a float64 forward."""
    import torch
    dt = getattr(torch, case.dtype)
    q, k, v = _qkv(case, shape, gen, device, dt)
    g = _gen(gen, device)
    do = torch.randn(*shape, generator=g, dtype=torch.float32, device=device).to(dt)
    causal = "causal" in case.kind
    B, H, T, D = shape
    o, lse = torch.empty(shape, dtype=dt, device=device), torch.empty((B, H, T), dtype=torch.float32, device=device)
    step = _chunks(T)
    for i in range(0, B * H, step):
        oo, ll = _attn(*(_heads(t)[i:i + step].double() for t in (q, k, v)), causal)
        _heads(o)[i:i + step] = oo.to(dt)
        lse.view(B * H, T)[i:i + step] = ll.float()
    return {"q": q.contiguous(), "k": k.contiguous(), "v": v.contiguous(), "o": o, "lse": lse,
            "do": do.contiguous(), "causal": causal}


def _fa_grads(inputs, dtype=None):
    """(dq, dk, dv) stacked, by autograd through _attn in float64 (dtype None) or in the inputs' own dtype; and,
    for float64, the positive-term magnitudes of the three formulas (their largest entries)."""
    import torch
    q, k, v, do = (inputs[n] for n in ("q", "k", "v", "do"))
    B, H, T, D = q.shape
    out = torch.empty((3, B * H, T, D), dtype=torch.float64, device=q.device)
    mags = torch.zeros(3, dtype=torch.float64, device=q.device)
    step = _chunks(T)
    for i in range(0, B * H, step):
        leaves = [_heads(t)[i:i + step].detach().to(dtype or torch.float64).requires_grad_() for t in (q, k, v)]
        g = _heads(do)[i:i + step].to(dtype or torch.float64)
        o, _ = _attn(*leaves, inputs["causal"])
        grads = torch.autograd.grad(o, leaves, g)
        for j, gr in enumerate(grads):
            out[j, i:i + step] = gr.double()
        if dtype is None:
            mags = torch.maximum(mags, _magnitudes(*(t.detach() for t in leaves), g, inputs["causal"]))
    return out.reshape(3, B, H, T, D), mags


def _magnitudes(q, k, v, do, causal):
    """The largest entry of each gradient's formula with every term made positive: |dS| <= P (|dP| + |D|)."""
    import torch
    scale = q.shape[-1] ** -0.5
    s = (q @ k.transpose(-1, -2)) * scale
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-1], s.shape[-1], dtype=torch.bool, device=s.device).triu(1), -math.inf)
    p = torch.softmax(s, -1)
    dp = (do @ v.transpose(-1, -2)).abs()
    ds = p * (dp + (p * dp).sum(-1, keepdim=True))
    return torch.stack([(scale * ds @ k.abs()).max(), (scale * ds.transpose(-1, -2) @ q.abs()).max(),
                        (p.transpose(-1, -2) @ do.abs()).max()])


def _fa_bwd_reference(inputs):
    grads, mags = _fa_grads(inputs)
    return {"grads": grads, "mags": mags}


def _fa_bwd_run(ns, inputs, outs):
    q = inputs["q"]
    dq, dk, dv = (outs.tensor(q.shape, q.dtype) for _ in range(3))
    ns["flash_attention_backward"](q, inputs["k"], inputs["v"], inputs["o"], inputs["lse"], inputs["do"],
                                   dq, dk, dv, inputs["causal"])
    return {"dq": dq, "dk": dk, "dv": dv}


FA_HINT = ("; dS = P ∘ (dP - D) with D = rowsum(dO ∘ O), P = exp(S - L) recomputed with the causal mask (scores "
           "masked to -inf before the exponential), dQ = scale · dS K, dK = scale · dSᵀ Q, dV = Pᵀ dO")


def _fa_bwd_verify(out, ref, inputs, case) -> list[str]:
    import torch
    low, _ = _fa_grads(inputs, dtype=getattr(torch, case.dtype))
    u = U[case.dtype]
    for j, name in enumerate(("dq", "dk", "dv")):
        r = ref["grads"][j]
        with_torch = (low[j].to(r.device) - r).abs().max().item()
        tol = 2 * with_torch + u * ref["mags"][j].item()
        bad = _compare(name, out[name], r, tol, case.dtype,
                       hint=f" (tolerance = 2 x the error of PyTorch's attention in {case.dtype} on these inputs, "
                            f"{with_torch:.3g}, + one rounding of the largest term){FA_HINT}")
        if bad:
            return bad
    return []


def _fa_bwd_rough(out, ref, inputs, case) -> list[str]:
    """The memory check's test of the gradients: within 5% of each one's largest term."""
    import torch
    for j, name in enumerate(("dq", "dk", "dv")):
        g = torch.as_tensor(out[name]).to(ref["grads"].device, torch.float64)
        err = (g - ref["grads"][j]).abs().max().item()
        if not err <= 0.05 * ref["mags"][j].item():
            return [f"{name} is not the gradient (max |error| {err:.3g}): memory is graded on a working kernel"]
    return []


def _bwd_flops(shape, kind) -> float:
    B, H, T, D = shape
    return 10 * B * H * T * T * D * (0.5 if "causal" in kind else 1.0)


def _sdpa_backward(inputs):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = (inputs[n].detach().clone().requires_grad_() for n in ("q", "k", "v"))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=inputs["causal"])

    def call():
        torch.autograd.grad(o, (q, k, v), inputs["do"], retain_graph=True)
    return call


register(Exercise(
    id="ch08.flash_attention_backward_triton",
    chapter="ch08_backward",
    title="FlashAttention-2 backward in Triton",
    entry=("flash_attention_backward",),
    kind="triton",
    spec="flash_attention_backward(q, k, v, o, lse, do, dq, dk, dv, causal): q, k, v, o, do, dq, dk, dv (B, H, T, D) "
         "contiguous, one dtype (float16 or bfloat16), D = 64 or 128, any T >= 1; lse (B, H, T) float32, the "
         "forward's log-sum-exp of each row's scores (natural log); write the gradients of o = softmax(q kᵀ / "
         "sqrt(D) [+ causal mask]) v given do; fp32 accumulators, no T x T matrix in memory",
    cases={
        "correctness": [Case((1, 2, 100, 64), dtype="float16"), Case((1, 2, 130, 64), "causal", dtype="float16"),
                        Case((2, 1, 37, 128), "large_causal", dtype="float16"),
                        Case((1, 1, 300, 64), "flat_causal", dtype="float16"),
                        Case((1, 2, 256, 64), "causal", dtype="bfloat16", gpu_only=True)],
        "hidden": [Case((1, 1, 1, 64), "causal", dtype="float16"), Case((1, 1, 1, 128), dtype="float16"),
                   Case((1, 1, 100, 64), "negative", dtype="float16"),
                   Case((1, 1, 100, 64), "negative_causal", dtype="float16"),
                   Case((2, 2, 600, 64), "large", dtype="float16", cpu_shape=(1, 1, 300, 64)),
                   Case((1, 4, 2048, 128), "flat", dtype="float16", cpu_shape=(1, 1, 260, 128)),
                   Case((1, 2, 1000, 128), "large_causal", dtype="bfloat16", gpu_only=True),
                   Case((2, 2, 777, 64), "causal", dtype="bfloat16", gpu_only=True)],
    },
    edges=(Edge("causal", "the diagonal tiles masked, the tiles above skipped", kinds=("causal",)),
           Edge("every score very negative", "exp(0 - L) of a padding key overflows in the dQ pass unless it is masked",
                kinds=("negative",)),
           Edge("near one-hot rows", "scores with standard deviation 6", kinds=("large",)),
           Edge("sums past float16", "v = 60 + N(0, 1): D and dP large, their difference small", kinds=("flat",))),
    make_inputs=_fa_bwd_inputs,
    reference=_fa_bwd_reference,
    run=_fa_bwd_run,
    verify=_fa_bwd_verify,
    solution="kernels_ref/ch08_backward/flash_attention_backward_triton.py",
    memory=Memory(Case((1, 2, 4096, 64), dtype="float16", cpu_shape=(1, 1, 2048, 64)),
                  limit=lambda s: s[2] * s[2], verify=_fa_bwd_rough,
                  what="a quarter of one head's T x T fp32 matrix: the backward's extra memory is O(T) (L and D)"),
    bench=Bench(shape=(4, 32, 4096, 128), nbytes=None, kind="causal", dtype="bfloat16", flops=_bwd_flops,
                baseline=_sdpa_backward, baseline_name="PyTorch SDPA backward (flash backend)",
                model="10·B·H·T²·D / 2 (five T x T x D matmuls per head; causal: half)", max_fraction=4.0),
    timeout_s={"cpu": 400, "gpu": 240},
))
