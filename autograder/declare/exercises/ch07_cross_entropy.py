"""Chapter 7 · Cross-entropy at vocabulary scale: the fused loss and gradient over the logits, and the linear
layer + loss with the logits never stored.

Exercise 1 (ch07.cross_entropy_triton): loss and gradient of cross-entropy with z-loss and label smoothing, in one
Triton kernel over logits that exist (bandwidth-graded). Exercise 2 (ch07.linear_cross_entropy_triton): the loss of
h @ W^T without the N x V logits ever in memory (graded for memory and, on a GPU, for throughput against PyTorch's
materialising h @ W.T + cross_entropy). Tolerances are derived next to each exercise.
"""
from __future__ import annotations

from autograder.declare.exercise import Bench, Case, Edge, Exercise, Memory
from autograder.declare.exercises.ch06_low_precision import _ulp_at

EXERCISES: list = []  # this chapter's exercises, in notebook order: the registry collects them
register = EXERCISES.append


# ---- 1. Cross-entropy with z-loss over a large vocabulary: loss and gradient, in Triton ----
#
# For a row x of V logits with target c (`t` in the code; ε = smoothing, w = z_weight), with lse = log Σ_j e^(x_j):
#   loss = lse - (1 - ε) x_c - (ε / V) Σ_j x_j + w lse²
#   d loss / d x_j = p_j (1 + 2 w lse) - ε / V - (1 - ε) [j = c],  p_j = e^(x_j - lse)
# and a row whose target is -100 (ignored, as PyTorch's ignore_index) has loss 0 and gradient 0, exactly.
# The reference is all float64 from the stored logits (bfloat16 logits are exact in float64).
# Tolerances. The loss (float32): 2e-5 (1 + |lse|) (1 + 2 w |lse|) + 1e-5 |loss|: float32's rounding of lse
# (an ulp of 150 is 1.5e-5) and of the chunked sums, never the 2^-9 relative of a bfloat16 statistic. The
# gradient, stored in the logits' dtype: half an ulp of that dtype at the reference value (one rounding; one
# ulp in CPU mode, where the interpreter truncates to bfloat16), plus 1e-4 of p_j (1 + 2 w lse) (float32's
# error in x - lse and in exp, up to about 2e-5 for logits near 300), plus 1e-6 at the target ((1 - ε)
# rounded to float32) and 2^-125 absolute (probabilities below float32's smallest normal flush to 0).

CE_KINDS = ("big", "constant", "hit", "miss", "ignored", "first", "last", "spread", "low")
CE_IGNORE = -100


def ce_params(case: Case) -> tuple[float, float]:
    """(z_weight, smoothing) of a case: z-loss 1e-4 unless the kind says "noz", smoothing 0.1 if it says "smooth"."""
    return (0.0 if "noz" in case.kind else 1e-4), (0.1 if "smooth" in case.kind else 0.0)


def ce_inputs(case: Case, shape, gen, device):
    """Logits N(0, σ²), σ in [0.5, 4] per row, random targets, one row in ten ignored ("randn"; none if the
    kind says "dense"), or the
    adversarial kinds cycled over the rows: big (around 100: e^x overflows float32 without the max),
    constant (p = 1/V), hit (-50 everywhere, +50 at the target: p_t near 1, the gradient there a small
    difference; and a block whose max is 100 below the running max: a running max that can go down
    overflows e^100), miss (the +50 elsewhere: a loss near 100), ignored (target -100), first and last (the
    target is column 0 or V - 1), spread (σ = 30: most p_j below float32's smallest normal) and low (around
    -200: a running max started at 0 instead of -inf underflows every e^(x - m) to 0)."""
    import torch
    rows, cols = shape
    g = torch.Generator(device="cpu").manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    b = torch.randn(rows, cols, generator=g, dtype=torch.float64)
    t = torch.randint(0, cols, (rows,), generator=g)
    if "adversarial" not in case.kind:
        x = b * (0.5 + 3.5 * torch.rand(rows, 1, generator=g, dtype=torch.float64))
        if "dense" not in case.kind:  # the benchmark's rows are all read (its byte count assumes so)
            t[torch.rand(rows, generator=g) < 0.1] = CE_IGNORE
    else:
        x = torch.empty_like(b)
        for r in range(rows):
            kind = CE_KINDS[r % len(CE_KINDS)]
            shifted = {"big": 100.0 + 20.0 * b[r], "spread": 30.0 * b[r], "low": -200.0 + 10.0 * b[r]}
            x[r] = shifted.get(kind, 2.0 * b[r])
            if kind == "constant":
                x[r] = 3.0
            elif kind in ("hit", "miss"):
                x[r] = -50.0
                x[r, t[r] if kind == "hit" or cols == 1 else (t[r] + 1 + int(torch.randint(0, cols - 1, (1,),
                                                                                          generator=g))) % cols] = 50.0
            elif kind == "ignored":
                t[r] = CE_IGNORE
            elif kind == "first":
                t[r] = 0
            elif kind == "last":
                t[r] = cols - 1
    w, eps = ce_params(case)
    return {"x": x.to(getattr(torch, case.dtype)).to(device), "target": t.to(device), "z_weight": w,
            "smoothing": eps, "inplace": "inplace" in case.kind}


def ce_reference(inputs):
    import torch
    x = inputs["x"].to(torch.float64)
    t = inputs["target"].to(x.device)
    w, eps = inputs["z_weight"], inputs["smoothing"]
    rows, cols = x.shape
    lse = torch.logsumexp(x, dim=-1)
    ignored = t == CE_IGNORE
    tt = torch.where(ignored, torch.zeros_like(t), t)
    loss = lse - (1 - eps) * x.gather(1, tt[:, None])[:, 0] - eps * x.mean(dim=-1) + w * lse * lse
    p = torch.exp(x - lse[:, None]) * (1 + 2 * w * lse[:, None])
    onehot = torch.zeros_like(x)
    onehot[torch.arange(rows, device=x.device), tt] = 1.0
    grad = p - eps / cols - (1 - eps) * onehot
    keep = (~ignored).to(x.dtype)[:, None]
    return {"loss": loss * keep[:, 0], "grad": grad * keep, "lse": lse, "p": p * keep, "onehot": onehot * keep,
            "ignored": ignored}


def _ce_run(ns, inputs, outs):
    import torch

    from autograder.boundary.guards import _grader_ops
    x = inputs["x"]
    loss = outs.tensor((x.shape[0],), torch.float32)
    dx = outs.tensor(x.shape, x.dtype)
    if inputs["inplace"]:  # the gradient overwrites the logits: a copy of them, the judge's own stay as they are
        with _grader_ops():
            dx.copy_(x)
        ns["cross_entropy"](dx, inputs["target"], loss, dx, inputs["z_weight"], inputs["smoothing"])
    else:
        ns["cross_entropy"](x, inputs["target"], loss, dx, inputs["z_weight"], inputs["smoothing"])
    return {"loss": loss, "grad": dx}


def _ce_row_kind(case: Case, r: int) -> str:
    return CE_KINDS[r % len(CE_KINDS)] if "adversarial" in case.kind else "random"


def ce_verify(out, ref, inputs, case) -> list[str]:
    import torch
    from course import mode
    w, eps = inputs["z_weight"], inputs["smoothing"]
    about = f"z_weight {w:g}, smoothing {eps:g}" + (", in place (dlogits is logits)" if inputs["inplace"] else "")
    loss = out["loss"].to(ref["loss"].device, torch.float64)
    if torch.isnan(loss).any():
        r = int(torch.nonzero(torch.isnan(loss))[0][0])
        return [f"loss[{r}] is NaN (row kind '{_ce_row_kind(case, r)}'; {about}): never written (outputs start as "
                "NaN), or an exponential that overflowed float32 (did you subtract the row max?)"]
    lse = ref["lse"].abs()
    tol = 2e-5 * (1 + lse) * (1 + 2 * w * lse) + 1e-5 * ref["loss"].abs()
    tol = torch.where(ref["ignored"], torch.zeros_like(tol), tol)  # an ignored row: exactly 0
    bad = ~((loss - ref["loss"]).abs() <= tol)
    if bad.any():
        r = int(torch.nonzero(bad)[0][0])
        return [f"loss[{r}] = {float(loss[r]):.7g}, expected {float(ref['loss'][r]):.7g} (row kind "
                f"'{_ce_row_kind(case, r)}'{', target -100: ignored, loss 0' if ref['ignored'][r] else ''}; "
                f"lse = {float(ref['lse'][r]):.7g}; {about}); {int(bad.sum())} of {bad.numel()} rows off"]
    g = out["grad"].to(ref["grad"].device).to(torch.float64)
    if torch.isnan(g).any():
        r, c = (int(i) for i in torch.nonzero(torch.isnan(g))[0])
        return [f"dlogits[{r}, {c}] is NaN (row kind '{_ce_row_kind(case, r)}'; {about}): never written, or "
                "e^(x - lse) of an lse that overflowed"]
    bits = 8 if case.dtype == "bfloat16" else 24
    ulps = 1.0 if (bits == 8 and not mode.GPU) else 0.5
    ulp = _ulp_at(ref["grad"], bits)
    tol = ulps * ulp + 1e-4 * ref["p"] + 1e-6 * ref["onehot"] + 2.0 ** -125
    tol = torch.where(ref["ignored"][:, None], torch.zeros_like(tol), tol)
    err = (g - ref["grad"]).abs()
    bad = ~(err <= tol)
    if bad.any():
        r, c = (int(i) for i in torch.nonzero(bad)[0])
        tgt = int(inputs["target"][r])
        where = ("target -100: the row is ignored, its gradient is 0" if ref["ignored"][r] else
                 "the target column" if c == tgt else f"target {tgt}")
        return [f"dlogits[{r}, {c}] = {float(g[r, c]):.6g}, expected {float(ref['grad'][r, c]):.6g} (row kind "
                f"'{_ce_row_kind(case, r)}', {where}; p = {float(ref['p'][r, c]):.4g}, lse = "
                f"{float(ref['lse'][r]):.6g}; {about}; allowed {float(tol[r, c]):.3g}); "
                f"{int(bad.sum())} of {bad.numel()} off"]
    return []


CE_EDGES = (
    Edge("every row kind", "overflow without the max, constant rows, the target hit or missed by one dominant "
         "logit, ignored rows, the target in the first or last column, probabilities below float32's normals",
         kinds=("adversarial",), min_rows=len(CE_KINDS)),
    Edge("label smoothing", "ε = 0.1: the mean of the logits in the loss and ε / V in every gradient entry",
         kinds=("smooth",)),
    Edge("no z-loss", "z_weight = 0: a kernel that hard-codes 1e-4 fails", kinds=("noz",)),
    Edge("in place", "dlogits is logits: the target's logit must be read before the gradient overwrites it",
         kinds=("inplace",)),
    Edge("one column", "V = 1: one real lane in a block of padding", widths=(1,)),
    Edge("float32 logits", "the gradient stored in float32, checked to float32's half ulp", dtypes=("float32",)),
    Edge("a 128k vocabulary", "131072 columns: many blocks per row", widths=(131072,)),
    Edge("a 256k vocabulary", "262144 columns", widths=(262144,)),
)

register(Exercise(
    id="ch07.cross_entropy_triton",
    chapter="ch07_cross_entropy",
    title="Cross-entropy with z-loss over a large vocabulary: loss and gradient in one Triton kernel",
    entry=("cross_entropy",),
    kind="triton",
    spec="cross_entropy(logits, target, loss, dlogits, z_weight, smoothing): logits (rows, V) float32 or "
         "bfloat16, contiguous, V up to 262144; target (rows,) int64, -100 = ignored; per row "
         "loss[i] = lse - (1 - smoothing) x[t] - smoothing · mean(x) + z_weight · lse² into loss (rows,) "
         "float32, and d loss[i] / d logits[i] into dlogits (same shape and dtype as logits; it may be logits "
         "itself); an ignored row: loss 0, gradient 0; statistics in float32",
    cases={
        "correctness": [Case((16, 32000), "adversarial", dtype="bfloat16"), Case((8, 1000), dtype="float32"),
                        Case((16, 32000), "adversarial-smooth", dtype="bfloat16")],
        "hidden": [Case((7, 3), "adversarial", dtype="float32"), Case((5, 1), "adversarial-smooth", dtype="float32"),
                   Case((33, 5000), "randn-noz", dtype="float32"),
                   Case((64, 131072), "adversarial-smooth", dtype="bfloat16", cpu_shape=(8, 131072)),
                   Case((24, 50257), "adversarial-inplace", dtype="bfloat16", cpu_shape=(8, 50257)),
                   Case((16, 262144), "adversarial", dtype="bfloat16", cpu_shape=(8, 262144))],
    },
    make_inputs=ce_inputs,
    reference=ce_reference,
    run=_ce_run,
    verify=ce_verify,
    solution="kernels_ref/ch07_cross_entropy/cross_entropy_triton.py",
    edges=CE_EDGES,
    bench=Bench(shape=(1024, 262144), nbytes=lambda s: 2 * s[0] * s[1] * 2 + 12 * s[0], dtype="bfloat16",
                model="read the logits once + write the gradient once = 2 · rows · V · 2 B (bfloat16), + 12 B per "
                      "row (target, loss)", kind="randn-dense", also=((4096, 32768), (2048, 131072))),
    timeout_s={"cpu": 180, "gpu": 60},
))


# ---- 2. Linear layer + cross-entropy, the logits never stored ----
#
# Inputs: hidden states h (N, H) and the vocabulary's weights W (V, H), both float16 or bfloat16, targets t (N,)
# int64 (-100 = ignored). The logits are X = h W^T (N x V); per row, lse = log Σ_j e^(X_ij) and
#   loss_i = lse_i - X_{i, t_i}     (0 for an ignored row; lse_i is written for every row, ignored ones too).
# The shape of a case is (N, H, V). The reference is float64 from the stored h and W, a few rows at a time.
#
# Tolerance. A logit is a dot product of H products h_k W_jk: each product of two float16 (11 significant bits) or
# bfloat16 (8) numbers is exact in float32 (24 bits), and the sum of H of them in float32, in any order (a tensor
# core's, a loop's), errs by at most about H · 2^-24 · Σ_k |h_k W_jk| (H additions, each rounding by at most the
# unit roundoff of a partial sum no larger than Σ|terms|); 2^-23 allows a truncating accumulator too. Call
# A_i = max_j Σ_k |h_ik W_jk| (the judge computes it from |h| |W|^T in float64): every logit of row i is then within
# γ A_i, γ = H · 2^-23. lse moves by at most the largest logit error (it is a p-weighted mean of the logits'
# errors, to first order), and the loss, lse - X_it, by at most twice that; on top, float32's rounding of lse and of
# the blockwise sum d, as in Exercise 1: 2e-5 (1 + |lse|) + 1e-5 |loss|. A kernel that rounds the logits to
# float16 before the log-sum-exp is off by up to half an ulp of a logit, 2^-5 = 0.03 near 100 ("big" rows), some
# ten times this tolerance there (about 4e-3 at H = 64); bfloat16 logits are off by up to 0.25.
#
# Memory. The float32 logits are 4 N V bytes; a kernel that keeps one tile of them in registers allocates nothing
# but its outputs; one that materialises C rows of logits at a time allocates 4 C V bytes. The limit is an eighth of
# the float32 logits (C < N / 8 rows of float32 logits at a time, N / 4 of bfloat16): at the GPU's memory case
# (4096 x 64 x 32768) 64 MiB of the full 512 MiB, where h (0.5 MiB) and W (4 MiB) are small. In CPU mode (512 x 16 x
# 4096: 1 MiB of 8 MiB) the Triton interpreter copies each input once (W: 128 KiB) and keeps its tiles as NumPy
# arrays: the reference peaks at about 0.45 MiB.

LCE_KINDS = ("big", "zero", "hit", "miss", "ignored", "first", "last", "spread", "low")


def lce_inputs(case: Case, shape, gen, device):
    """W: N(0, 1/(H-1)) in its first H - 1 columns and 1 in the last, so that h's last entry is a bias added to
    every logit of its row; h: N(0, σ²) with σ in [0.5, 4] per row, one row in ten ignored ("randn"; none if the
    kind says "dense"), or the adversarial kinds cycled over the rows: big (bias +100: e^x overflows float32
    without the max), zero (h = 0: every logit 0, lse = log V), hit (h = 150 W_t / |W_t|², bias -75: the target's
    logit 75, the others about -75 ± 150/sqrt(H), so a later tile's max lies 100 or more below the running max and
    a running max that may go down overflows e^100), miss (the same aimed at another word: a loss near 150),
    ignored (target -100), first and last (the target is word 0 or V - 1), spread (logits with σ = 30) and low
    (bias -200: a running max started at 0 instead of -inf underflows every e^(x - m) to 0)."""
    import torch
    n, hd, v = shape
    g = torch.Generator(device="cpu").manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    w = torch.randn(v, hd, generator=g, dtype=torch.float64) / max(1, hd - 1) ** 0.5
    w[:, -1] = 1.0
    h = torch.randn(n, hd, generator=g, dtype=torch.float64)
    t = torch.randint(0, v, (n,), generator=g)
    if "adversarial" not in case.kind:
        h *= 0.5 + 3.5 * torch.rand(n, 1, generator=g, dtype=torch.float64)
        if "dense" not in case.kind:  # the timed and memory cases read every row
            t[torch.rand(n, generator=g) < 0.1] = CE_IGNORE
    else:
        for r in range(n):
            kind = LCE_KINDS[r % len(LCE_KINDS)]
            if kind == "big":
                h[r, -1] = 100.0
            elif kind == "zero":
                h[r] = 0.0
            elif kind in ("hit", "miss"):
                j = int(t[r]) if kind == "hit" or v == 1 else (int(t[r]) + 1 + int(torch.randint(0, v - 1, (1,),
                                                                                                generator=g))) % v
                u = w[j, :-1]
                h[r, :-1] = 150.0 * u / max(float(u @ u), 1e-6)
                h[r, -1] = -75.0
            elif kind == "ignored":
                t[r] = CE_IGNORE
            elif kind == "first":
                t[r] = 0
            elif kind == "last":
                t[r] = v - 1
            elif kind == "spread":
                h[r] *= 30.0 / max(1.0, float(h[r, :-1].norm()) / max(1, hd - 1) ** 0.5)
                h[r, -1] = 0.0
            elif kind == "low":
                h[r, -1] = -200.0
    dt = getattr(torch, case.dtype)
    return {"h": h.to(dt).to(device).contiguous(), "W": w.to(dt).to(device).contiguous(), "target": t.to(device)}


def lce_reference(inputs):
    """float64 lse, target logit and loss of h W^T, and A = max_j Σ_k |h_k W_jk| per row, 256 rows at a time (the
    judge's memory stays bounded too)."""
    import torch
    h = inputs["h"].to(torch.float64)
    w = inputs["W"].to(torch.float64)
    t = inputs["target"].to(h.device)
    ignored = t == CE_IGNORE
    tt = torch.where(ignored, torch.zeros_like(t), t)
    lse, xt, amax = (torch.empty(h.shape[0], dtype=torch.float64, device=h.device) for _ in range(3))
    wa = w.abs()
    for i in range(0, h.shape[0], 256):
        x = h[i:i + 256] @ w.T
        lse[i:i + 256] = torch.logsumexp(x, dim=-1)
        xt[i:i + 256] = x.gather(1, tt[i:i + 256, None])[:, 0]
        amax[i:i + 256] = (h[i:i + 256].abs() @ wa.T).amax(dim=-1)
    loss = torch.where(ignored, torch.zeros_like(lse), lse - xt)
    return {"loss": loss, "lse": lse, "amax": amax, "ignored": ignored, "H": h.shape[1]}


def _lce_run(ns, inputs, outs):
    import torch
    n = inputs["h"].shape[0]
    loss = outs.tensor((n,), torch.float32)
    lse = outs.tensor((n,), torch.float32)
    ns["linear_cross_entropy"](inputs["h"], inputs["W"], inputs["target"], loss, lse)
    return {"loss": loss, "lse": lse}


def _lce_row_kind(case: Case, r: int) -> str:
    return LCE_KINDS[r % len(LCE_KINDS)] if "adversarial" in case.kind else "random"


def lce_tolerance(ref) -> tuple:
    """(tolerance of lse, tolerance of the loss) per row: see the derivation above."""
    import torch
    gamma = ref["H"] * 2.0 ** -23
    lse = ref["lse"].abs()
    lse_tol = gamma * ref["amax"] + 2e-5 * (1 + lse)
    loss_tol = 2 * gamma * ref["amax"] + 2e-5 * (1 + lse) + 1e-5 * ref["loss"].abs()
    return lse_tol, torch.where(ref["ignored"], torch.zeros_like(loss_tol), loss_tol)  # ignored: exactly 0


def lce_verify(out, ref, inputs, case) -> list[str]:
    import torch
    lse_tol, loss_tol = lce_tolerance(ref)
    for name, tol in (("loss", loss_tol), ("lse", lse_tol)):
        got = out[name].to(ref[name].device, torch.float64)
        if torch.isnan(got).any():
            r = int(torch.nonzero(torch.isnan(got))[0][0])
            return [f"{name}[{r}] is NaN (row kind '{_lce_row_kind(case, r)}'): never written (outputs start as NaN), "
                    "or an exponential that overflowed float32 (did you subtract the running max?)"]
        bad = ~((got - ref[name]).abs() <= tol)
        if bad.any():
            r = int(torch.nonzero(bad)[0][0])
            tgt = int(inputs["target"][r])
            return [f"{name}[{r}] = {float(got[r]):.7g}, expected {float(ref[name][r]):.7g} (row kind "
                    f"'{_lce_row_kind(case, r)}', target {tgt}{': ignored, loss 0' if tgt == CE_IGNORE else ''}; "
                    f"lse = {float(ref['lse'][r]):.7g}; allowed {float(tol[r]):.3g}: float32 logits and statistics); "
                    f"{int(bad.sum())} of {bad.numel()} rows off"]
    return []


def _lce_flops(shape, kind) -> float:
    n, hd, v = shape
    return 2.0 * n * hd * v  # the product h W^T; the log-sum-exp's few operations per logit are not counted


def _lce_materialised(inputs):
    """PyTorch's usual path: the logits h @ W.T in memory (the input's dtype), widened to float32, cross_entropy."""
    import torch.nn.functional as F
    h, w, t = inputs["h"], inputs["W"], inputs["target"]

    def call():
        F.cross_entropy((h @ w.T).float(), t, reduction="none", ignore_index=CE_IGNORE)
    return call


LCE_EDGES = (
    Edge("every row kind", "overflow without the max, all-zero logits, the target hit or missed by one logit 150 "
         "above the rest (a later tile's max 100 below the running max), ignored rows, the target in the first or "
         "last word, spread logits, logits near -200", kinds=("adversarial",), min_rows=len(LCE_KINDS)),
    Edge("one word", "V = 1: one real column in a tile of padding", widths=(1,)),
    Edge("three words", "V = 3, H = 16: the smallest tiles tl.dot takes, mostly padding", widths=(3,)),
    Edge("a vocabulary of no tile's multiple", "50257 words (5003 in CPU mode, with H = 96: two steps over H, the "
         "second one partly padding)", widths=(50257, 5003)),
    Edge("many tiles per row", "262144 words (16384 in CPU mode, where the interpreter is slow)",
         widths=(262144, 16384)),
)

register(Exercise(
    id="ch07.linear_cross_entropy_triton",
    chapter="ch07_cross_entropy",
    title="Linear layer + cross-entropy with the logits never stored, in Triton",
    entry=("linear_cross_entropy",),
    kind="triton",
    spec="linear_cross_entropy(h, W, target, loss, lse): h (N, H) and W (V, H) float16 or bfloat16, contiguous; "
         "target (N,) int64, -100 = ignored; the logits are X = h @ W.T (N x V), never stored whole: per row "
         "lse[i] = log Σ_j e^(X[i, j]) into lse (N,) float32 (every row) and loss[i] = lse[i] - X[i, target[i]] "
         "into loss (N,) float32 (0 for an ignored row); logits and statistics in float32; memory: less than an "
         "eighth of the N x V float32 logits",
    cases={
        "correctness": [Case((64, 64, 1000), "adversarial", dtype="float16"), Case((32, 40, 3000), dtype="float16"),
                        Case((64, 64, 1000), "adversarial", dtype="bfloat16", gpu_only=True)],
        "hidden": [Case((7, 16, 3), "adversarial", dtype="float16"), Case((5, 32, 1), "adversarial", dtype="float16"),
                   Case((300, 128, 50257), "adversarial", dtype="float16", cpu_shape=(18, 96, 5003)),
                   Case((129, 72, 4099), dtype="bfloat16", gpu_only=True),
                   Case((16, 64, 262144), "adversarial", dtype="float16", cpu_shape=(9, 64, 16384))],
    },
    make_inputs=lce_inputs,
    reference=lce_reference,
    run=_lce_run,
    verify=lce_verify,
    solution="kernels_ref/ch07_cross_entropy/linear_cross_entropy_triton.py",
    edges=LCE_EDGES,
    memory=Memory(Case((4096, 64, 32768), "randn-dense", dtype="float16", cpu_shape=(512, 16, 4096)),
                  limit=lambda s: s[0] * s[2] * 4 // 8,
                  what="an eighth of the N x V float32 logits: a tile of logits in registers, or a chunk of fewer "
                       "than N/8 rows of them, stays below it; all the logits, or a chunk of N/8 rows, do not"),
    bench=Bench(shape=(8192, 4096, 131072), nbytes=None, kind="randn-dense", dtype="bfloat16",
                flops=_lce_flops, baseline=_lce_materialised,
                baseline_name="PyTorch h @ W.T, then F.cross_entropy on the float32 logits",
                model="2·N·H·V (the product h Wᵀ; the loss's own work not counted)", max_fraction=2.0,
                also=((4096, 2048, 65536),)),
    timeout_s={"cpu": 300, "gpu": 120},
))
