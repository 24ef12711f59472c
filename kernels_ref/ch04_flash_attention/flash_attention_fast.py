"""Chapter 4's fast reference: the fastest FlashAttention forward we have for the GPU and shape at hand.

Same contract as the exercise (`flash_attention(q, k, v, o, causal)`, q/k/v/o (B, H, T, D) contiguous fp16/bf16, o
written in place). It runs

* `flash_attention_gluon.py` (FlashAttention-3's design in Gluon: a TMA producer warp, two or three consumer
  warpgroups, the softmax of one key tile overlapping the PV GEMM of the one before) where it applies: a Hopper GPU
  (compute capability 9.x), D 64 or 128, T a multiple of its tiles, a Triton with Gluon's Hopper module;
* else the notebook's teaching kernel (`flash_attention_triton.py`), which runs anywhere Triton does (the CPU
  interpreter included).

`last_kernel()` names the one the last call ran. kernels_ref.bench lists this file in FAST_REFERENCES, so the
benchmark report (kernels_ref.report) times it as "flashcourse"; students' bars do not depend on it.
"""
from __future__ import annotations

import os

from kernels_ref.ch04_flash_attention import flash_attention_gluon as gluon_fa
from kernels_ref.ch04_flash_attention import flash_attention_triton as teaching

_LAST = ["none"]


def gluon_applies(q, causal=False) -> bool:
    """Whether flash_attention_gluon takes these inputs (no exception expected)."""
    if not gluon_fa.HAS_GLUON or not q.is_cuda or os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        return False
    import torch
    if torch.cuda.get_device_capability(q.device)[0] != 9:
        return False
    B, H, T, D = q.shape
    if T <= 0 or B * H <= 0:
        return False
    cfg = gluon_fa.choose(D, T, causal)
    if cfg is None:
        return False
    try:
        gluon_fa.check_config(cfg, D, T)
    except ValueError:
        return False
    if T % cfg.BLOCK_M and cfg.num_consumers != 3:  # a partial last query tile: tested on GPUs for 3 consumers only
        return False
    return q.dtype in (torch.bfloat16, torch.float16)


def flash_attention(q, k, v, o, causal):
    """o = softmax(q kᵀ / sqrt(D) [+ causal mask]) v, by the fastest kernel that applies (module docstring)."""
    if gluon_applies(q, causal) and all(t.is_contiguous() and t.shape == q.shape and t.dtype == q.dtype
                                        and t.data_ptr() % 16 == 0 for t in (q, k, v, o)):  # TMA: 16-byte bases
        _LAST[0] = "gluon"
        gluon_fa.flash_attention(q, k, v, o, causal)
        return
    _LAST[0] = "teaching"
    teaching.flash_attention(q, k, v, o, causal)


def last_kernel() -> str:
    """"gluon" or "teaching": which kernel the last flash_attention call ran."""
    return _LAST[0]
