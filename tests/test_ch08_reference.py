"""Chapter 8's reference kernels (kernels_ref/ch08_backward/) against float64 gradients from torch.autograd.

CPU mode: the Triton interpreter, small shapes (the whole file runs in well under three minutes on two cores).
Every case draws inputs that break a careless kernel: one-hot and -inf softmax rows, rows with a large mean,
constant and zero rows for the norms, T = 1 and odd T for attention (partial last tiles), causal masks, scores
so negative that exp(0 - L) of a padding key overflows, and values whose sums pass float16's range.

Tolerances. u is the unit roundoff of the dtype (2^-24 float32, 2^-11 float16, 2^-8 bfloat16; the interpreter
truncates float32 -> bfloat16, so one full ulp there). Softmax and the norms compute in float32 and round each
output once: half an ulp of the output (one in CPU mode for bfloat16) plus float32's error on the row's terms.
Attention follows FlashAttention's rule: at most twice the error of the same computation done by PyTorch in the
input's precision, plus one rounding of the largest gradient. bfloat16 attention needs a GPU (the interpreter's
bf16 tl.dot is wrong)."""
import importlib.util
import math
import os

import pytest

torch = pytest.importorskip("torch")
import course  # noqa: E402  (the mode: the kernels run on the GPU where there is one)

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels_ref", "ch08_backward")
U = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}
MANTISSA = {"float32": 23, "float16": 10, "bfloat16": 7}


def _load(name):
    spec = importlib.util.spec_from_file_location(f"ch08_{name}", os.path.join(HERE, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def k():
    return {n: _load(n) for n in ("softmax_backward_triton", "rmsnorm_backward_triton", "layernorm_backward_triton",
                                  "flash_attention_backward_triton")}


DEV = "cuda" if course.GPU else "cpu"


def _launch(fn, *args):
    """fn(*args) on the device the kernels run on: each tensor copied there with its strides (a strided row stays
    strided), and copied back after the call, so the caller's output tensors hold the result."""
    if DEV == "cpu":
        return fn(*args)
    moved = []
    for a in args:
        if isinstance(a, torch.Tensor):
            d = torch.empty_strided(a.size(), a.stride(), dtype=a.dtype, device=DEV)
            d.copy_(a)
            moved.append(d)
        else:
            moved.append(a)
    fn(*moved)
    torch.cuda.synchronize()
    for a, d in zip(args, moved):
        if isinstance(a, torch.Tensor):
            a.copy_(d.cpu())


def _ulp(r, dtype):
    """Spacing of dtype's numbers at |r| (the smallest normal's below the normal range)."""
    emin = {"float32": -126, "float16": -14, "bfloat16": -126}[dtype]
    _, e = torch.frexp(r.abs().clamp_min(2.0**emin))
    return torch.ldexp(torch.ones_like(r), (e - 1 - MANTISSA[dtype]).to(torch.int32))


def _floor(dtype):
    """An absolute floor: float32 and bfloat16 results below the normal range may be flushed to 0 (the interpreter's
    truncation to bfloat16 does); float16 keeps its subnormals (one step)."""
    return 2.0**-126 if dtype != "float16" else 2.0**-24


def _out_ulps(dtype):
    return 1.0 if dtype == "bfloat16" else 0.5  # CPU mode: the interpreter truncates to bfloat16


def _assert_close(name, got, ref, tol, dtype="float32"):
    got = got.double()
    tol = tol + _floor(dtype)
    assert not torch.isnan(got).any(), f"{name}: NaN at {torch.nonzero(torch.isnan(got))[0].tolist()}"
    err = (got - ref).abs()
    bad = ~(err <= tol)
    if bad.any():
        i = tuple(torch.nonzero(bad)[0].tolist())
        raise AssertionError(f"{name}{list(i)} = {got[i]:.8g}, expected {ref[i]:.8g} (|error| {err[i]:.3g}, "
                             f"tolerance {tol[i]:.3g}); {int(bad.sum())} of {bad.numel()} off")


# ---------------------------------------------------------------- softmax backward

def _logits(rows, cols, g):
    x = 3 * torch.randn(rows, cols, generator=g, dtype=torch.float64)
    kinds = torch.arange(rows) % 4
    x[kinds == 1] *= 50  # near one-hot rows: y is 0 or 1 almost everywhere
    x[(kinds == 2)[:, None] & (torch.rand(rows, cols, generator=g) < 0.5)] = -math.inf  # y exactly 0 there
    x[kinds == 2, 0] = 0.0  # ... but never a whole row
    x[kinds == 3] = 7.0  # constant rows: y = 1/cols
    return x


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(1, 1), (4, 37), (9, 1000), (3, 4096)])
def test_softmax_backward(k, dtype, shape):
    g = torch.Generator().manual_seed(shape[0] * 7919 + shape[1])
    dt = getattr(torch, dtype)
    x = _logits(*shape, g).requires_grad_()
    dy = (torch.randn(*shape, generator=g, dtype=torch.float64) * 10).to(dt)
    y64 = torch.softmax(x, -1)
    y64.backward(dy.double())
    wide = torch.zeros(shape[0], shape[1] + 5, dtype=dt)  # y's rows strided
    wide[:, 2:2 + shape[1]] = y64.detach().to(dt)
    y = wide[:, 2:2 + shape[1]]
    dx = torch.full(shape, math.nan, dtype=dt)
    _launch(k["softmax_backward_triton"].softmax_backward, y, dy, dx)
    yd, dyd = y.double(), dy.double()
    yerr = U[dtype] * yd.abs() + _floor(dtype)  # y's rounding (or flush to 0 below the normal range)
    tol = 4 * yerr * (dyd.abs() + (yd * dyd).abs().sum(-1, keepdim=True)) + _out_ulps(dtype) * _ulp(x.grad, dtype)
    _assert_close("dx", dx, x.grad, tol, dtype)


# ---------------------------------------------------------------- RMSNorm and LayerNorm backward

EPS = 1e-5
KINDS = ("normal", "large_mean", "constant", "tiny", "large", "zeros")


def _norm_rows(rows, cols, g):
    z = torch.randn(rows, cols, generator=g, dtype=torch.float64)
    x = z.clone()
    kind = torch.arange(rows) % len(KINDS)
    x[kind == 1] = 1e4 + z[kind == 1]
    x[kind == 2] = z[kind == 2][:, :1].expand(-1, cols)
    x[kind == 3] = 1e-6 * z[kind == 3]
    x[kind == 4] = 300 * z[kind == 4]
    x[kind == 5] = 0.0
    return x


def _norm_case(rows, cols, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    dt = getattr(torch, dtype)
    x = _norm_rows(rows, cols, g).to(dt)
    gamma = (1 + 0.5 * torch.randn(cols, generator=g, dtype=torch.float64)).to(dt)
    beta = (0.5 * torch.randn(cols, generator=g, dtype=torch.float64)).to(dt)
    dy = torch.randn(rows, cols, generator=g, dtype=torch.float64)
    dy[torch.arange(rows) % 5 == 4] *= 1000  # large-magnitude gradients on some rows
    return x, gamma, beta, dy.to(dt)


def _norm_tols(x64, g64, dy64, gx, gg, dtype, layer):
    """Per-element tolerances of dx and dgamma (and dbeta) computed in float32 and rounded once."""
    mean = x64.mean(-1, keepdim=True) if layer else torch.zeros_like(x64[:, :1])
    xc = x64 - mean
    rstd = torch.rsqrt((xc * xc).mean(-1, keepdim=True) + EPS)
    xhat = xc * rstd
    gdy = (g64 * dy64).abs()
    row = rstd * (gdy + gdy.mean(-1, keepdim=True) + xhat.abs() * (gdy * xhat.abs()).mean(-1, keepdim=True))
    # float32: the row's terms, and (LayerNorm) x - mean, whose rounding 2^-24 |mean| is amplified by rstd
    f32 = 2.0**-24 * math.sqrt(x64.shape[1]) * 8 * row * (1 + (x64.abs().amax(-1, keepdim=True)) * rstd)
    tdx = _out_ulps(dtype) * _ulp(gx, dtype) + f32
    tdg = _out_ulps(dtype) * _ulp(gg, dtype) + 2.0**-24 * 64 * (dy64 * xhat).abs().sum(0) * (
        1 + (x64.abs().amax(-1, keepdim=True) * rstd).amax())
    return tdx, tdg


NORM_SHAPES = [(1, 1), (6, 37), (12, 1000), (160, 64), (5, 4096)]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", NORM_SHAPES)
def test_rmsnorm_backward(k, dtype, shape):
    x, gamma, _, dy = _norm_case(*shape, dtype, seed=shape[0] * 31 + shape[1])
    x64, g64 = x.double().requires_grad_(), gamma.double().requires_grad_()
    y = x64 * torch.rsqrt((x64 * x64).mean(-1, keepdim=True) + EPS) * g64
    y.backward(dy.double())
    dx = torch.full(shape, math.nan, dtype=x.dtype)
    dg = torch.full(shape[1:], math.nan, dtype=x.dtype)
    _launch(k["rmsnorm_backward_triton"].rmsnorm_backward, x, gamma, dy, dx, dg, EPS)
    tdx, tdg = _norm_tols(x.double(), gamma.double(), dy.double(), x64.grad, g64.grad, dtype, layer=False)
    _assert_close("dx", dx, x64.grad, tdx, dtype)
    _assert_close("dgamma", dg, g64.grad, tdg, dtype)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", NORM_SHAPES)
def test_layernorm_backward(k, dtype, shape):
    x, gamma, beta, dy = _norm_case(*shape, dtype, seed=shape[0] * 37 + shape[1])
    x64, g64, b64 = (t.double().requires_grad_() for t in (x, gamma, beta))
    xc = x64 - x64.mean(-1, keepdim=True)  # the formula itself: F.layer_norm's float64 x̂ of a 1-column row is
    (xc * torch.rsqrt((xc * xc).mean(-1, keepdim=True) + EPS) * g64 + b64).backward(dy.double())  # 1e-16, not 0
    dx = torch.full(shape, math.nan, dtype=x.dtype)
    dg, db = (torch.full(shape[1:], math.nan, dtype=x.dtype) for _ in range(2))
    _launch(k["layernorm_backward_triton"].layernorm_backward, x, gamma, dy, dx, dg, db, EPS)
    tdx, tdg = _norm_tols(x.double(), gamma.double(), dy.double(), x64.grad, g64.grad, dtype, layer=True)
    _assert_close("dx", dx, x64.grad, tdx, dtype)
    _assert_close("dgamma", dg, g64.grad, tdg, dtype)
    tdb = _out_ulps(dtype) * _ulp(b64.grad, dtype) + 2.0**-24 * 64 * dy.double().abs().sum(0)
    _assert_close("dbeta", db, b64.grad, tdb, dtype)


def test_norm_backward_is_deterministic(k):
    """Two calls, the same bits: dgamma is summed in a fixed order (no atomics)."""
    x, gamma, beta, dy = _norm_case(40, 64, "float32", seed=5)
    outs = []
    for _ in range(2):
        dx, dg, db = torch.empty_like(x), torch.empty_like(gamma), torch.empty_like(gamma)
        _launch(k["layernorm_backward_triton"].layernorm_backward, x, gamma, dy, dx, dg, db, EPS)
        outs.append(torch.cat([dx.flatten(), dg, db]))
    assert torch.equal(outs[0], outs[1])


def test_dgamma_tolerance_rejects_bfloat16_sums(k):
    """The dgamma check means something: the same sums carried in bfloat16 (each program's share rounded after
    every row, as a kernel with a bfloat16 accumulator does) fall outside it."""
    x, gamma, _, dy = _norm_case(300, 64, "bfloat16", seed=11)
    x64, g64 = x.double().requires_grad_(), gamma.double().requires_grad_()
    xhat = x64 * torch.rsqrt((x64 * x64).mean(-1, keepdim=True) + EPS)
    (xhat * g64).backward(dy.double())
    parts = 16  # the CPU wrapper's grid: min(rows, 4 * 4)
    contrib = (dy.double() * xhat.detach()).float()
    share = torch.zeros(parts, 64, dtype=torch.bfloat16)
    for r in range(300):
        share[r % parts] = (share[r % parts].float() + contrib[r]).to(torch.bfloat16)
    bad = share.float().sum(0).to(torch.bfloat16)
    _, tdg = _norm_tols(x.double(), gamma.double(), dy.double(), x64.grad, g64.grad, "bfloat16", layer=False)
    assert ((bad.double() - g64.grad).abs() > tdg).any()


# ---------------------------------------------------------------- FlashAttention-2 backward

def _qkv(shape, kind, seed):
    g = torch.Generator().manual_seed(seed)
    q, kk, v, do = (torch.randn(*shape, generator=g) for _ in range(4))
    if kind == "large":
        q = q * 6  # near one-hot rows of P
    if kind == "flat":
        q = torch.zeros_like(q)  # every row the mean of V; sums of v past float16's range at large T
        v = v + 60
    if kind == "negative":
        q = -(200 + 10 * q.abs())  # every score below -200 sqrt(D): exp(0 - L) overflows for a padding key
        kk = 1 + kk.abs()
    return tuple(t.to(torch.float16) for t in (q, kk, v, do))


def _attention(q, k_, v, causal):
    s = (q @ k_.transpose(-1, -2)) * q.shape[-1] ** -0.5
    if causal:
        T = s.shape[-1]
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), -math.inf)
    return torch.softmax(s, -1) @ v, torch.logsumexp(s, -1)


def _magnitudes(q, k_, v, do, causal):
    """The gradients' formulas with every term made positive: |dS| <= P (|dP| + |D|). One rounding of the largest
    term is the floor of the tolerance (a gradient may be 0 exactly: T = 1 gives dS = P (dP - D) = 0)."""
    q, k_, v, do = (t.detach().double() for t in (q, k_, v, do))
    scale = q.shape[-1] ** -0.5
    s = (q @ k_.transpose(-1, -2)) * scale
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-1], s.shape[-1], dtype=torch.bool).triu(1), -math.inf)
    p = torch.softmax(s, -1)
    dp = (do @ v.transpose(-1, -2)).abs()
    ds = p * (dp + (p * dp).sum(-1, keepdim=True))
    return scale * ds @ k_.abs(), scale * ds.transpose(-1, -2) @ q.abs(), p.transpose(-1, -2) @ do.abs()


FA_CASES = [((1, 1, 1, 64), "randn", True), ((1, 1, 1, 64), "randn", False), ((1, 2, 37, 64), "randn", True),
            ((1, 1, 130, 128), "randn", False), ((1, 1, 130, 128), "large", True), ((2, 1, 200, 64), "large", False),
            ((1, 1, 100, 64), "negative", False), ((1, 1, 100, 64), "negative", True),
            ((1, 1, 300, 64), "flat", True)]


@pytest.mark.parametrize("shape,kind,causal", FA_CASES)
def test_flash_attention_backward(k, shape, kind, causal):
    fa = k["flash_attention_backward_triton"]
    q, kk, v, do = _qkv(shape, kind, seed=shape[2] * 13 + causal)
    leaves = [t.double().requires_grad_() for t in (q, kk, v)]
    o64, lse64 = _attention(*leaves, causal)
    o64.backward(do.double())
    refs = [t.grad for t in leaves]
    # PyTorch's same computation in float16 (P and every product rounded to float16), for the tolerance
    low = [t.clone().requires_grad_() for t in (q, kk, v)]
    _attention(*low, causal)[0].backward(do)
    # the forward: o and L
    o = torch.full(shape, math.nan, dtype=q.dtype)
    lse = torch.full(shape[:3], math.nan, dtype=torch.float32)
    _launch(fa.attention_forward, q, kk, v, o, lse, causal)
    _assert_close("o", o, o64.detach(), 2 * (_attention(q, kk, v, causal)[0].double() - o64).abs().max()
                  + U["float16"] * o64.abs().max() + torch.zeros_like(o64))
    _assert_close("lse", lse, lse64.detach(), 1e-5 * (1 + lse64.detach().abs()))
    # the backward, from the stored o and L
    grads = [torch.full(shape, math.nan, dtype=q.dtype) for _ in range(3)]
    _launch(fa.flash_attention_backward, q, kk, v, o, lse, do, *grads, causal)
    for name, got, ref, lo, mag in zip(("dq", "dk", "dv"), grads, refs, low, _magnitudes(*leaves, do, causal)):
        tol = 2 * (lo.grad.double() - ref).abs().max() + U["float16"] * mag.max()
        _assert_close(name, got, ref, tol + torch.zeros_like(ref), "float16")


def test_flash_attention_backward_is_deterministic(k):
    fa = k["flash_attention_backward_triton"]
    q, kk, v, do = _qkv((1, 2, 150, 64), "randn", seed=3)
    o, lse = torch.empty_like(q), torch.empty(q.shape[:3], dtype=torch.float32)
    _launch(fa.attention_forward, q, kk, v, o, lse, True)
    runs = []
    for _ in range(2):
        grads = [torch.empty_like(q) for _ in range(3)]
        _launch(fa.flash_attention_backward, q, kk, v, o, lse, do, *grads, True)
        runs.append(torch.cat([g.flatten() for g in grads]))
    assert torch.equal(runs[0], runs[1])
