"""Chapter 4 · FlashAttention: attention over key/value tiles with online softmax in NumPy, and a
Triton FlashAttention forward graded for correctness, memory and throughput.

Attention: O = softmax(S) V with S = Q Kᵀ / sqrt(D); under a causal mask query i sees keys j <= i.
Inputs are N(0, 1). Kinds (combined with "causal" in the kind name):
  large: q scaled by 6, so scores have standard deviation 6 (near one-hot rows; exp overflows
         float32 without the running max);
  flat:  q = 0, so every row is the plain mean of the values, and v = 60 + N(0, 1): a row's
         unnormalised accumulator is sum(v) ~ 60·T, past float16's largest value (65504) from
         T = 1092 keys on.
  negative: q = -(200 + 10|N|), k = 1 + |N|, so every score is below -200·sqrt(D)
         (-800 at D = 16, -1600 at 64): e^s underflows unless the running max starts at -inf and
         follows the scores down (a running max that starts at 0 passed every other case: found
         by mutation testing).

Tolerance (Triton). The reference is float64 attention of the same fp16/bf16 inputs. PyTorch's own
scaled_dot_product_attention, in the input's precision on the same inputs, has some max error E;
the kernel may have at most 2·E + u·max|O| (u: the unit roundoff of the output type, 2^-11 fp16,
2^-8 bf16: one more rounding of the largest output). A kernel with an fp16 accumulator, or
without the rescale of its accumulator, is far outside this.

Memory. FlashAttention needs O(T) memory besides its inputs and output; the materialised score
matrix is O(T²). The memory check watches every tensor the submission allocates (and the GPU's
peak, and NumPy's via tracemalloc) and fails at a quarter of one head's T x T fp32 matrix. It
runs a kernel that works (output within 5%: precision is graded by the correctness cells).

Throughput. TFLOP/s = FLOPs / time with FLOPs = 4·B·H·T²·D (two matmuls of 2·T²·D each per head),
half of that under a causal mask; compared with PyTorch's SDPA flash backend on the same inputs,
timed in the same grading run.
"""
from __future__ import annotations

import math

import numpy as np

from autograder.declare.exercise import Bench, Case, Edge, Exercise, Memory
from autograder.declare.exercises.ch03_online_softmax import hashed_uniform

EXERCISES: list = []  # this chapter's exercises, in notebook order: the registry collects them
register = EXERCISES.append


def _causal(case: Case) -> bool:
    return "causal" in case.kind


def _masked_softmax_av(q, k, v, causal: bool):
    """float64 attention (torch tensors), for (..., T, D) inputs."""
    import torch
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        T, Tk = s.shape[-2], s.shape[-1]
        above = torch.ones(T, Tk, dtype=torch.bool, device=s.device).triu(1)
        s = s.masked_fill(above, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def _qkv(case: Case, shape, gen, device, dtype):
    import torch
    g = torch.Generator(device=device).manual_seed(int(torch.randint(2**62, (1,), generator=gen)))
    q, k, v = (torch.randn(*shape, generator=g, dtype=torch.float32, device=device) for _ in range(3))
    if "large" in case.kind:
        q = q * 6
    if "flat" in case.kind:
        q = torch.zeros_like(q)
        v = v + 60
    if "negative" in case.kind:
        q = -(200 + 10 * q.abs())
        k = 1 + k.abs()
    return tuple(t.to(dtype) for t in (q, k, v))


# ---- 1. Blockwise attention in NumPy over a stream of key/value tiles ----

class ReadTwice(RuntimeError):
    pass


class KVTiles:
    """(start, k, v) tiles of K and V, each a fresh array made when the tile is read (tile(start)), in the
    order given; iterable once."""

    def __init__(self, tile, order):
        self._tile, self._order, self._used = tile, order, False

    def __iter__(self):
        if self._used:
            raise ReadTwice("the tiles were read a second time: FlashAttention visits each key/value "
                            "tile once, keeping only (m, l, acc) per query row")
        self._used = True
        for start in self._order:
            k, v = self._tile(start)
            yield start, k, v


BLOCK = 64  # tile size of the stream


def _generated_tile(key: int, tk: int, d: int, start: int):
    """Rows start .. of a generated K and V (Tk x D, float64, uniform with mean 0 and variance 1, made by
    ch03's counter-based hashed_uniform, lanes 0 for K and 1 for V): the runner makes each tile as it is
    read, and never holds K or V; the judge makes the same values for its reference."""
    n = min(start + BLOCK, tk) - start
    return tuple((hashed_uniform(key, lane, start * d, n * d).reshape(n, d) - 0.5) * math.sqrt(12)
                 for lane in (0, 1))


def _blockwise_inputs(case: Case, shape, gen, device):
    """Shape (T, D): q, K and V drawn by _qkv, sent whole. Kind "generated", shape (Tq, Tk, D): q (Tq, D)
    drawn by _qkv, K and V (Tk, D) made tile by tile as the stream is read (_generated_tile): the runner is
    sent only their key and size."""
    import torch
    if case.kind == "generated":
        tq, tk, d = shape
        q = _qkv(Case((tq, d)), (tq, d), gen, "cpu", torch.float64)[0].numpy()
        return {"q": q, "key": int(torch.randint(2**62, (1,), generator=gen)), "tk": tk, "causal": False,
                "order": list(range(0, tk, BLOCK))}
    q, k, v = (t.numpy() for t in _qkv(case, shape, gen, "cpu", torch.float64))
    order = list(range(0, shape[0], BLOCK))
    if "shuffled" in case.kind:  # tiles in any order: for a causal row, the first tile may be all masked
        rng = np.random.default_rng(int(torch.randint(2**31, (1,), generator=gen)))
        rng.shuffle(order)
        if len(order) > 1 and order[0] == 0:  # tile 0 first would hide the -inf row: never first
            order[0], order[-1] = order[-1], order[0]
    return {"q": q, "k": k, "v": v, "causal": _causal(case), "order": order}


def _tile_source(inputs):
    """tile(start) -> (k, v): fresh arrays, sliced from the K and V sent, or made (kind "generated")."""
    if "key" in inputs:
        key, tk, d = inputs["key"], inputs["tk"], inputs["q"].shape[1]
        return lambda start: _generated_tile(key, tk, d, start)
    k, v = inputs["k"], inputs["v"]
    return lambda start: (k[start:start + BLOCK].copy(), v[start:start + BLOCK].copy())


def _blockwise_reference(inputs):
    import torch
    if "key" in inputs:
        tile = _tile_source(inputs)
        k, v = (np.concatenate(parts) for parts in zip(*(tile(s) for s in range(0, inputs["tk"], BLOCK))))
    else:
        k, v = inputs["k"], inputs["v"]
    q, k, v = (torch.from_numpy(a) for a in (inputs["q"], k, v))
    return _masked_softmax_av(q, k, v, inputs["causal"]).numpy()


def _blockwise_run(ns, inputs, outs):
    q = inputs["q"].copy()
    q.setflags(write=False)
    tiles = KVTiles(_tile_source(inputs), inputs["order"])
    return np.asarray(ns["attention_blockwise"](q, tiles, inputs["causal"]))


def _blockwise_verify(out, ref, inputs, case) -> list[str]:
    if out.shape != ref.shape:
        return [f"output shape {out.shape}, expected {ref.shape}"]
    nan = np.isnan(out)
    if nan.any():
        i = int(np.nonzero(nan.any(axis=1))[0][0])
        return [f"row {i} of the output is NaN: 0/0 or e^(-inf - (-inf)). Under a causal mask a tile can "
                "be entirely masked for a row (tiles may come in any order): its max is -inf"]
    err = np.abs(out - ref)
    tol = 1e-9 * max(1.0, float(np.abs(ref).max()))
    if not err.max() <= tol:
        i, j = np.unravel_index(int(np.argmax(err)), err.shape)
        return [f"o[{i}, {j}] = {out[i, j]:.10g}, expected {ref[i, j]:.10g} (|error| {err[i, j]:.2g} > {tol:.2g}; "
                f"{int((err > tol).sum())} of {err.size} elements off)"]
    return []


register(Exercise(
    id="ch04.attention_blockwise",
    chapter="ch04_flash_attention",
    title="Blockwise attention with online softmax (NumPy)",
    entry=("attention_blockwise",),
    kind="python",
    spec="attention_blockwise(q, tiles, causal) -> o: q (T, D) float64 (read-only); tiles yields "
         f"(start, k, v) once each, k and v ({BLOCK} or fewer rows, D) = rows start.. of K and V (Tk rows, "
         "Tk >= T, made as they are read), in any order; return softmax(q Kᵀ / sqrt(D)) V as (T, D) "
         "float64, query i seeing only keys j <= i when causal",
    cases={
        "correctness": [Case((100, 16)), Case((130, 32), "causal"), Case((64, 8), "large")],
        "hidden": [Case((1, 16), "causal"), Case((1000, 64), "large_causal"), Case((300, 32), "causal_shuffled"),
                   Case((257, 16), "large_shuffled"), Case((2000, 8), "flat"), Case((200, 16), "negative")],
    },
    edges=(Edge("first tile fully masked", "tiles in any order: a causal row whose first tile is all -inf",
                kinds=("causal_shuffled",)),
           Edge("every score very negative", "e^s underflows unless the running max starts at -inf",
                kinds=("negative",)),
           Edge("accumulator past float16", "sum of v past 65504", kinds=("flat",))),
    make_inputs=_blockwise_inputs,
    reference=_blockwise_reference,
    run=_blockwise_run,
    verify=_blockwise_verify,
    solution="kernels_ref/ch04_flash_attention/attention_blockwise.py",
    # Memory: 64 queries against a generated stream of Tk = 65536 keys, D = 32 (shape (Tq, Tk, D)). Kept
    # so as to be read twice, K and V cost 2·Tk·D·8 B = 32 MiB (as float32 16 MiB, and wrong); the Tq x Tk
    # score matrix 32 MiB. One pass holds q, (m, l, acc) and one Tq x 64 tile of scores with its
    # temporaries (tens of KiB); the process's peak also counts the code pages (NumPy's, BLAS's) the call
    # runs for the first time in the runner (~3 MiB measured on CPU for the reference). The limit, a
    # quarter of K and V (8 MiB), lies between.
    memory=Memory(Case((64, 65536, 32), "generated"), limit=lambda s: s[1] * s[2] * 2 * 8 // 4,
                  what="a quarter of K and V (65536 x 32 float64 each: 32 MiB together): past it, the tiles "
                       "were buffered (or all the scores were kept); one pass holds (m, l, acc) and one 64 x 64 "
                       "tile of scores, about 2.5 MiB here with the code the call runs"),
    timeout_s={"cpu": 60, "gpu": 60},
))


# ---- 2. FlashAttention forward in Triton ----

FLASH_EDGES = (
    Edge("causal", "a causal mask: tiles on and above the diagonal", kinds=("causal",)),
    Edge("every score very negative", "e^s underflows unless the running max starts at -inf (mutation testing)",
         kinds=("negative",)),
    Edge("near one-hot rows", "scores with standard deviation 6: exp overflows without the running max",
         kinds=("large",)),
    Edge("accumulator past float16", "sum of v past 65504", kinds=("flat",)),
)

UNIT_ROUNDOFF = {"float16": 2.0**-11, "bfloat16": 2.0**-8}


def _fa_inputs(case: Case, shape, gen, device):
    import torch
    q, k, v = _qkv(case, shape, gen, device, getattr(torch, case.dtype))
    return {"q": q.contiguous(), "k": k.contiguous(), "v": v.contiguous(), "causal": _causal(case)}


def _fa_reference(inputs):
    """float64 attention of the half-precision inputs, a few heads at a time (bounded memory)."""
    import torch
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    B, H, T, D = q.shape
    qf, kf, vf = (t.reshape(B * H, T, D) for t in (q, k, v))
    step = max(1, (1 << 27) // (T * T))  # 1 GiB of float64 scores at most
    parts = [_masked_softmax_av(qf[i:i + step].double(), kf[i:i + step].double(), vf[i:i + step].double(),
                                inputs["causal"]) for i in range(0, B * H, step)]
    return torch.cat(parts).reshape(B, H, T, D)


def _sdpa(inputs):
    import torch.nn.functional as F
    return F.scaled_dot_product_attention(inputs["q"], inputs["k"], inputs["v"], is_causal=inputs["causal"])


def _fa_run(ns, inputs, outs):
    q = inputs["q"]
    o = outs.tensor(q.shape, q.dtype)
    ns["flash_attention"](q, inputs["k"], inputs["v"], o, inputs["causal"])
    return o


def _fa_verify(out, ref, inputs, case) -> list[str]:
    import torch
    o = torch.as_tensor(out)
    if tuple(o.shape) != tuple(ref.shape):
        return [f"output shape {tuple(o.shape)}, expected {tuple(ref.shape)}"]
    od = o.to(ref.device, torch.float64)
    nan = torch.isnan(od)
    if nan.any():
        b, h, t, d = (int(i) for i in torch.nonzero(nan)[0])
        return [f"o[{b}, {h}, {t}, {d}] is NaN ({int(nan.sum())} NaNs): never written (outputs start as NaN), "
                "or 0/0, inf/inf, e^(-inf - (-inf)) (a row whose tile is entirely masked), or an "
                "accumulator that overflowed"]
    with_torch = (_sdpa(inputs).to(torch.float64) - ref).abs().max().item()
    u = UNIT_ROUNDOFF[case.dtype]
    tol = 2 * with_torch + u * ref.abs().max().item()
    err = (od - ref).abs()
    if not err.max().item() <= tol:
        b, h, t, d = (int(i) for i in torch.nonzero(err == err.max())[0])
        return [f"o[{b}, {h}, {t}, {d}] = {od[b, h, t, d]:.6g}, expected {ref[b, h, t, d]:.6g}: max |error| "
                f"{err.max():.3g} > tolerance {tol:.3g} (= 2 x the error of PyTorch's SDPA in {case.dtype} on "
                f"these inputs, {with_torch:.3g}, + one rounding of the largest output); "
                f"{int((err > tol).sum())} of {err.numel()} elements are off"]
    return []


def _fa_rough(out, ref, inputs, case) -> list[str]:
    """The memory check's test of the output: attention was computed (within 5% of the largest
    output); precision is the correctness cells' business."""
    import torch
    od = torch.as_tensor(out).to(ref.device, torch.float64)
    err = (od - ref).abs().max().item()
    if not err <= 0.05 * ref.abs().max().item():
        return [f"the output is not attention (max |error| {err:.3g}): memory is graded on a working kernel"]
    return []


def _flops(shape, kind) -> float:
    B, H, T, D = shape
    return 4 * B * H * T * T * D * (0.5 if "causal" in kind else 1.0)


def _flash_backend(inputs):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def call():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            F.scaled_dot_product_attention(inputs["q"], inputs["k"], inputs["v"], is_causal=inputs["causal"])
    return call


register(Exercise(
    id="ch04.flash_attention_triton",
    chapter="ch04_flash_attention",
    title="FlashAttention forward in Triton",
    entry=("flash_attention",),
    kind="triton",
    spec="flash_attention(q, k, v, o, causal): q, k, v, o (B, H, T, D) contiguous tensors of one dtype "
         "(float16 or bfloat16) on the course device, D = 64 or 128, T any length; write "
         "softmax(q kᵀ / sqrt(D)) v into o, query i seeing only keys j <= i when causal; fp32 statistics "
         "and accumulator, no T x T matrix in memory",
    cases={
        "correctness": [Case((1, 2, 200, 64), dtype="float16"), Case((1, 2, 200, 64), "causal", dtype="float16"),
                        Case((2, 1, 130, 128), "large_causal", dtype="float16"),
                        Case((1, 1, 1500, 64), "flat_causal", dtype="float16"),
                        Case((1, 2, 256, 64), "causal", dtype="bfloat16", gpu_only=True)],
        "hidden": [Case((1, 1, 1, 64), "causal", dtype="float16"), Case((2, 3, 17, 128), dtype="float16"),
                   Case((1, 1, 100, 64), "negative", dtype="float16"),
                   Case((2, 2, 1000, 64), "large", dtype="float16", cpu_shape=(1, 1, 1000, 64)),
                   Case((1, 4, 4096, 64), "flat", dtype="float16", cpu_shape=(1, 1, 1200, 64)),
                   Case((1, 2, 1000, 128), "large_causal", dtype="bfloat16", gpu_only=True),
                   Case((1, 2, 4096, 128), "flat", dtype="bfloat16", gpu_only=True),
                   Case((2, 2, 777, 64), "causal", dtype="bfloat16", gpu_only=True)],
    },
    make_inputs=_fa_inputs,
    reference=_fa_reference,
    run=_fa_run,
    verify=_fa_verify,
    solution="kernels_ref/ch04_flash_attention/flash_attention_triton.py",
    edges=FLASH_EDGES,
    memory=Memory(Case((1, 2, 4096, 64), dtype="float16", cpu_shape=(1, 1, 2048, 64)),
                  limit=lambda s: s[2] * s[2], verify=_fa_rough,
                  what="a quarter of one head's T x T fp32 score matrix: FlashAttention's extra memory is O(T)"),
    bench=Bench(shape=(4, 32, 4096, 128), nbytes=None, kind="causal", dtype="bfloat16",
                flops=_flops, baseline=_flash_backend, baseline_name="PyTorch SDPA (flash backend)",
                model="4·B·H·T²·D / 2 (two T x T x D matmuls per head; causal: half)", max_fraction=4.0),
    timeout_s={"cpu": 300, "gpu": 240},
))


# ---- 3. Optional: scalar FlashAttention in CUDA, one query row per warp (fp32, correctness only) ----

WARPS_PER_BLOCK = 4  # launch contract: 128 threads per block, one query row per warp


def _warp_inputs(case: Case, shape, gen, device):
    import torch
    q, k, v = _qkv(case, shape, gen, device, torch.float32)
    return {"q": q.contiguous(), "k": k.contiguous(), "v": v.contiguous(), "causal": _causal(case)}


def _warp_run(ns, inputs, outs):
    import torch
    q = inputs["q"]
    B, H, T, D = q.shape
    rows = B * H * T
    o = outs.tensor(q.shape, torch.float32)
    grid = (rows + WARPS_PER_BLOCK - 1) // WARPS_PER_BLOCK
    ns["flash_attention_warp"]((grid,), (32 * WARPS_PER_BLOCK,),
                               (q, inputs["k"], inputs["v"], o, rows, T, D, int(inputs["causal"])))
    return o


def _warp_verify(out, ref, inputs, case) -> list[str]:
    """fp32 against float64: |error| <= 2e-4 · max|v| (an output row is an average of value rows;
    fp32 sums over up to a thousand keys and __expf stay far inside, fp16 arithmetic does not)."""
    import torch
    o = torch.as_tensor(out).to(ref.device, torch.float64)
    nan = torch.isnan(o)
    if nan.any():
        b, h, t, d = (int(i) for i in torch.nonzero(nan)[0])
        return [f"o[{b}, {h}, {t}, {d}] is NaN ({int(nan.sum())} NaNs): never written (outputs start as NaN), "
                "or 0/0, or e^(-inf - (-inf))"]
    tol = 2e-4 * inputs["v"].abs().max().item()
    err = (o - ref).abs()
    if not err.max().item() <= tol:
        b, h, t, d = (int(i) for i in torch.nonzero(err == err.max())[0])
        return [f"o[{b}, {h}, {t}, {d}] = {o[b, h, t, d]:.7g}, expected {ref[b, h, t, d]:.7g}: max |error| "
                f"{err.max():.3g} > {tol:.3g} (2e-4 x max|v|); {int((err > tol).sum())} of {err.numel()} "
                "elements are off"]
    return []


register(Exercise(
    id="ch04.flash_attention_cuda",
    chapter="ch04_flash_attention",
    title="Optional: FlashAttention in CUDA, one query row per warp",
    entry=("flash_attention_warp",),
    kind="cuda",
    spec='extern "C" __global__ void flash_attention_warp(const float* q, const float* k, const float* v, '
         "float* o, int rows, int T, int D, int causal): q, k, v, o (B, H, T, D) float32, contiguous; "
         f"rows = B*H*T; launched with {32 * WARPS_PER_BLOCK} threads per block and ceil(rows / "
         f"{WARPS_PER_BLOCK}) blocks, warp w of block b owns row {WARPS_PER_BLOCK}b + w; D = 32, 64 or 128",
    cases={
        "correctness": [Case((1, 2, 64, 64)), Case((1, 1, 100, 128), "causal"), Case((2, 1, 50, 32), "large_causal")],
        "hidden": [Case((1, 1, 1, 64), "causal"), Case((1, 2, 257, 64), "large", cpu_shape=(1, 1, 257, 64)),
                   Case((1, 1, 64, 64), "negative"),
                   Case((2, 4, 1000, 128), "causal", cpu_shape=(1, 1, 300, 128)),
                   Case((1, 3, 999, 32), "flat", cpu_shape=(1, 1, 333, 32))],
    },
    make_inputs=_warp_inputs,
    reference=_fa_reference,
    run=_warp_run,
    verify=_warp_verify,
    solution="kernels_ref/ch04_flash_attention/flash_attention_warp.cu",
    edges=FLASH_EDGES,
    timeout_s={"cpu": 300, "gpu": 120},
))
