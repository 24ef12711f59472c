"""Candidate: a FlashAttention forward tuned for Hopper (sm_90), beside the teaching kernel.

Same contract as the Chapter 4 exercise (`flash_attention(q, k, v, o, causal)`, q/k/v/o (B, H, T, D)
contiguous fp16/bf16) and the same algorithm (online softmax over key tiles, fp32 statistics and
accumulator). What differs from `flash_attention_triton.py`, and why:

* TMA (`tma=1`: host `TensorDescriptor`; `tma=2`: `tl.make_tensor_descriptor` in the kernel). On Hopper
  a tile load through a tensor descriptor is one instruction issued by one thread: the copy engine
  writes the tile into shared memory in the swizzled layout that wgmma reads, without the address
  arithmetic and register staging of 128 pointer loads. The descriptors view q/k/v/o as one
  (B*H*T, D) matrix; tiles that run past a head's end read the next head's rows (or zeros at the
  end of the tensor), which the key mask and the masked output store make harmless.
* The softmax scale is applied inside one FMA: the row max is taken on the raw scores and scaled
  (BLOCK_M multiplies), then `s * scale - m` feeds exp2, instead of a multiply per score before the max.
* `ws=True` asks the compiler for automatic warp specialization of the key loop
  (`tl.range(..., warp_specialize=True)`): a producer warp issues the TMA loads while the other
  warps do the GEMMs and the softmax (FlashAttention-3's producer/consumer split). Triton 3.6 has a
  Hopper pass for it (`add_hopper_warpspec` in the sm_80/90 pipeline), but its `tl.range` docstring
  still says Blackwell only, and compiled offline for sm_90 with triton 3.6.0 this kernel's PTX is
  the same with and without it (no warp_specialize op, no setmaxnreg): kept as a flag for a later
  Triton, left out of the sweep.
* `pipe=True` software-pipelines the unmasked loop by hand: the scores of key tile j+1 are issued
  (an asynchronous wgmma) before the softmax of tile j, so the tensor cores work while the
  exp2/max/sum of the previous tile run (FlashAttention-3's intra-warpgroup overlap). It costs a
  second BLOCK_M x BLOCK_N fp32 tile of registers.
* Causal masking only on the diagonal tiles, with a separate loop for them (the teaching kernel does
  this too), longest query tiles launched first; tile sizes, warps and stages per head dimension
  in CONFIGS, any of them overridable per call.

Any option the running Triton lacks (no tensor descriptors) falls back to pointer loads.
"""
from __future__ import annotations

import os
from typing import NamedTuple

import triton
import triton.language as tl

try:  # host-side TMA descriptors: triton >= 3.4 (checked in 3.6.0's and 3.7.1's sources)
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # pragma: no cover - older triton
    TensorDescriptor = None
HAS_DEVICE_DESC = hasattr(tl, "make_tensor_descriptor")


class Config(NamedTuple):
    BLOCK_M: int
    BLOCK_N: int
    num_warps: int
    num_stages: int
    tma: int = 1       # 0 pointer loads, 1 host TensorDescriptor, 2 tl.make_tensor_descriptor in the kernel
    ws: bool = False   # tl.range(..., warp_specialize=True) on the key loops
    pipe: bool = False  # hand-pipelined main loop: next tile's QK^T issued before this tile's softmax

    def name(self) -> str:
        return (f"BM{self.BLOCK_M}-BN{self.BLOCK_N}-w{self.num_warps}-s{self.num_stages}-tma{self.tma}"
                + ("-ws" if self.ws else "") + ("-pipe" if self.pipe else ""))


# Defaults by head dimension: the teaching kernel's H100-tuned tiles plus TMA (a guess until the sweep,
# benchmarks/attention_hopper_sweep.py, measures the others).
CONFIGS = {64: Config(128, 64, 4, 3), 128: Config(128, 64, 8, 3)}


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


@triton.jit
def _load_rows(src, head_row, start, T, offs_r, offs_d, D: tl.constexpr, TMA: tl.constexpr,
               MASKED: tl.constexpr):
    """Rows [start, start + len(offs_r)) of one head whose row 0 is global row head_row."""
    if TMA:
        return src.load([head_row + start, 0])  # TMA: out-of-tensor rows come back as zeros
    else:
        ptrs = src + (head_row + start).to(tl.int64) * D + offs_r[:, None] * D + offs_d[None, :]
        if MASKED:
            return tl.load(ptrs, mask=(start + offs_r)[:, None] < T, other=0.0)
        else:
            return tl.load(ptrs)


@triton.jit
def _update(acc, l_i, m_i, qk, v, offs_m, start, offs_n, T, qk_scale,
            MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """Fold one tile of raw scores qk = q kᵀ (and its values v) into the online-softmax state."""
    if MASKED:  # the last partial tile and (causal) the diagonal tiles only
        keep = (start + offs_n)[None, :] < T
        if CAUSAL:
            keep = keep & ((start + offs_n)[None, :] <= offs_m[:, None])
        qk = tl.where(keep, qk, -float("inf"))
    # Scale after the max (BLOCK_M multiplies) and fold it into the subtraction: one FMA per score.
    # qk_scale > 0 keeps the max the max; log2(e) is in qk_scale, so exp2 is the exact softmax exp.
    m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
    p = tl.exp2(qk * qk_scale - m_new[:, None])
    alpha = tl.exp2(m_i - m_new)  # rescales what was accumulated under the old max
    acc = acc * alpha[:, None]
    acc = tl.dot(p.to(v.dtype), v, acc)
    l_i = l_i * alpha + tl.sum(p, 1)  # after the dot: the row sum overlaps the PV wgmma
    return acc, l_i, m_new


@triton.jit
def _attend(acc, l_i, m_i, q, k_src, v_src, head_row, offs_m, offs_n, offs_d, lo, hi, T, qk_scale,
            D: tl.constexpr, BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr,
            TMA: tl.constexpr, WS: tl.constexpr):
    """Key tiles [lo, hi), one at a time."""
    for start in tl.range(lo, hi, BLOCK_N, warp_specialize=WS):
        k = _load_rows(k_src, head_row, start, T, offs_n, offs_d, D, TMA, MASKED)
        qk = tl.dot(q, tl.trans(k))
        v = _load_rows(v_src, head_row, start, T, offs_n, offs_d, D, TMA, MASKED)
        acc, l_i, m_i = _update(acc, l_i, m_i, qk, v, offs_m, start, offs_n, T, qk_scale, MASKED, CAUSAL)
    return acc, l_i, m_i


@triton.jit
def _attend_pipelined(acc, l_i, m_i, q, k_src, v_src, head_row, offs_m, offs_n, offs_d, lo, hi, T, qk_scale,
                      D: tl.constexpr, BLOCK_N: tl.constexpr, TMA: tl.constexpr):
    """Unmasked key tiles [lo, hi) with the scores one tile ahead: the QKᵀ wgmma of tile j+1 is in
    flight while the softmax of tile j runs (Hopper's wgmma is asynchronous until its result is used)."""
    if hi > lo:
        k = _load_rows(k_src, head_row, lo, T, offs_n, offs_d, D, TMA, False)
        qk = tl.dot(q, tl.trans(k))
        for start in tl.range(lo, hi - BLOCK_N, BLOCK_N):
            k = _load_rows(k_src, head_row, start + BLOCK_N, T, offs_n, offs_d, D, TMA, False)
            qk_next = tl.dot(q, tl.trans(k))
            v = _load_rows(v_src, head_row, start, T, offs_n, offs_d, D, TMA, False)
            acc, l_i, m_i = _update(acc, l_i, m_i, qk, v, offs_m, start, offs_n, T, qk_scale, False, False)
            qk = qk_next
        v = _load_rows(v_src, head_row, hi - BLOCK_N, T, offs_n, offs_d, D, TMA, False)
        acc, l_i, m_i = _update(acc, l_i, m_i, qk, v, offs_m, hi - BLOCK_N, offs_n, T, qk_scale, False, False)
    return acc, l_i, m_i


@triton.jit
def flash_attention_hopper_kernel(q_in, k_in, v_in, o_in, o_ptr, T, n_rows, qk_scale, D: tl.constexpr,
                                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                                  TMA: tl.constexpr, WS: tl.constexpr, PIPE: tl.constexpr,
                                  EVEN_M: tl.constexpr, EVEN_N: tl.constexpr):
    """Program (i, bh): query rows of tile i of head bh. q/k/v/o_in are (n_rows = B*H*T, D) tensor
    descriptors (TMA=1), or pointers (TMA=0, and TMA=2 which builds the descriptors here);
    o_ptr is o as a pointer, for the masked store of a partial last tile."""
    tl.static_assert(BLOCK_M % BLOCK_N == 0)  # the diagonal is whole key tiles
    tile = tl.num_programs(0) - 1 - tl.program_id(0)  # longest (causal) tiles first: less tail
    head_row = tl.program_id(1) * T
    if TMA == 2:
        q_src = tl.make_tensor_descriptor(q_in, shape=[n_rows, D], strides=[D, 1], block_shape=[BLOCK_M, D])
        k_src = tl.make_tensor_descriptor(k_in, shape=[n_rows, D], strides=[D, 1], block_shape=[BLOCK_N, D])
        v_src = tl.make_tensor_descriptor(v_in, shape=[n_rows, D], strides=[D, 1], block_shape=[BLOCK_N, D])
        o_src = tl.make_tensor_descriptor(o_in, shape=[n_rows, D], strides=[D, 1], block_shape=[BLOCK_M, D])
    else:
        q_src = q_in
        k_src = k_in
        v_src = v_in
        o_src = o_in
    offs_m = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    # Query rows past T (TMA: the next head's rows) give rows that are never stored.
    q = _load_rows(q_src, head_row, tile * BLOCK_M, T, tl.arange(0, BLOCK_M), offs_d, D, TMA, not EVEN_M)
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    if EVEN_N:
        full = T
    else:
        full = (T // BLOCK_N) * BLOCK_N  # key tiles entirely inside T
    if CAUSAL:
        lo = tl.minimum(tile * BLOCK_M, full)    # below the diagonal: no mask
        hi = tl.minimum((tile + 1) * BLOCK_M, T)  # nothing above the diagonal
    else:
        lo = full
        hi = T
    if PIPE:
        acc, l_i, m_i = _attend_pipelined(acc, l_i, m_i, q, k_src, v_src, head_row, offs_m, offs_n, offs_d,
                                          0, lo, T, qk_scale, D, BLOCK_N, TMA)
    else:
        acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_src, v_src, head_row, offs_m, offs_n, offs_d, 0, lo, T,
                                qk_scale, D, BLOCK_N, False, CAUSAL, TMA, WS)
    if CAUSAL or not EVEN_N:  # the diagonal tiles and/or the partial last tile, masked
        acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_src, v_src, head_row, offs_m, offs_n, offs_d, lo, hi, T,
                                qk_scale, D, BLOCK_N, True, CAUSAL, TMA, WS)
    o = (acc / l_i[:, None]).to(o_ptr.dtype.element_ty)
    if TMA and EVEN_M:
        o_src.store([head_row + tile * BLOCK_M, 0], o)
    else:  # a TMA store of a partial tile would write into the next head's rows
        rows = tl.arange(0, BLOCK_M)
        ptrs = o_ptr + (head_row + tile * BLOCK_M).to(tl.int64) * D + rows[:, None] * D + offs_d[None, :]
        tl.store(ptrs, o, mask=(offs_m < T)[:, None])


_ALLOCATOR_SET = []


def _device_desc_allocator():
    """tl.make_tensor_descriptor writes its descriptors to global scratch memory that Triton asks for."""
    if not _ALLOCATOR_SET:
        import torch

        def alloc(size: int, alignment: int, stream):
            return torch.empty(size, dtype=torch.int8, device="cuda")
        triton.set_allocator(alloc)
        _ALLOCATOR_SET.append(True)


def resolve_config(D: int, config: Config | None = None) -> Config:
    """The config to run: the given one, else CONFIGS' for this head dimension; TMA falls back to
    pointer loads where this Triton lacks descriptors."""
    cfg = config or CONFIGS.get(D) or CONFIGS[128 if D > 64 else 64]
    if cfg.tma == 1 and TensorDescriptor is None or cfg.tma == 2 and not HAS_DEVICE_DESC:
        cfg = cfg._replace(tma=0)
    return cfg


def flash_attention(q, k, v, o, causal, config: Config | None = None):
    """o = softmax(q kᵀ / sqrt(D) [+ causal mask]) v; q, k, v, o (B, H, T, D), fp16 or bf16, contiguous."""
    B, H, T, D = q.shape
    assert D >= 16 and D & (D - 1) == 0, "head dimension: a power of two >= 16"
    if _interpreting() and q.dtype.itemsize == 2 and str(q.dtype) == "torch.bfloat16":
        # The interpreter's bf16 tl.dot is wrong (triton-lang/triton#11584): run on fp32 copies.
        o32 = o.float()
        flash_attention(q.float(), k.float(), v.float(), o32, causal, config)
        o.copy_(o32)
        return
    cfg = resolve_config(D, config)
    n_rows = B * H * T
    qk_scale = D ** -0.5 * 1.4426950408889634  # 1/sqrt(D), times log2(e) for exp2
    if cfg.tma == 1:
        def desc(t, rows):
            return TensorDescriptor(t.view(n_rows, D), shape=[n_rows, D], strides=[D, 1], block_shape=[rows, D])
        args = (desc(q, cfg.BLOCK_M), desc(k, cfg.BLOCK_N), desc(v, cfg.BLOCK_N), desc(o, cfg.BLOCK_M))
    else:
        if cfg.tma == 2 and not _interpreting():
            _device_desc_allocator()
        args = (q, k, v, o)
    grid = (triton.cdiv(T, cfg.BLOCK_M), B * H)
    flash_attention_hopper_kernel[grid](*args, o, T, n_rows, qk_scale, D=D, BLOCK_M=cfg.BLOCK_M,
                                        BLOCK_N=cfg.BLOCK_N, CAUSAL=bool(causal), TMA=cfg.tma, WS=bool(cfg.ws),
                                        PIPE=bool(cfg.pipe), EVEN_M=T % cfg.BLOCK_M == 0,
                                        EVEN_N=T % cfg.BLOCK_N == 0, num_warps=cfg.num_warps,
                                        num_stages=cfg.num_stages)
