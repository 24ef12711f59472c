"""Correct, but materialises S = QKᵀ (B·H·T·T floats) in memory: three kernels, scores, softmax, P·V."""
EXERCISE = "ch04.flash_attention_triton"
CELL = "flash_attention_triton"
PATCH = [("def flash_attention(q, k, v, o, causal):\n", '''@triton.jit
def scores_kernel(q_ptr, k_ptr, s_ptr, T, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                  CAUSAL: tl.constexpr):
    bh = tl.program_id(2).to(tl.int64)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + bh * T * D + rm[:, None] * D + rd[None, :], mask=rm[:, None] < T, other=0.0)
    k = tl.load(k_ptr + bh * T * D + rn[:, None] * D + rd[None, :], mask=rn[:, None] < T, other=0.0)
    s = tl.dot(q, tl.trans(k)) * scale
    if CAUSAL:
        s = tl.where(rn[None, :] <= rm[:, None], s, -float("inf"))
    tl.store(s_ptr + bh * T * T + rm[:, None] * T + rn[None, :], s, mask=(rm[:, None] < T) & (rn[None, :] < T))


@triton.jit
def softmax_rows_kernel(s_ptr, T, BLOCK: tl.constexpr):
    row = s_ptr + tl.program_id(0).to(tl.int64) * T
    cols = tl.arange(0, BLOCK)
    s = tl.load(row + cols, mask=cols < T, other=-float("inf"))
    p = tl.exp(s - tl.max(s, 0))
    tl.store(row + cols, p / tl.sum(p, 0), mask=cols < T)


@triton.jit
def pv_kernel(p_ptr, v_ptr, o_ptr, T, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    bh = tl.program_id(1).to(tl.int64)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    acc = tl.zeros([BM, D], tl.float32)
    for start in range(0, T, BN):
        p = tl.load(p_ptr + bh * T * T + rm[:, None] * T + (start + rn)[None, :],
                    mask=(rm[:, None] < T) & ((start + rn)[None, :] < T), other=0.0)
        v = tl.load(v_ptr + bh * T * D + (start + rn)[:, None] * D + rd[None, :],
                    mask=(start + rn)[:, None] < T, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc)
    tl.store(o_ptr + bh * T * D + rm[:, None] * D + rd[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=rm[:, None] < T)


def flash_attention(q, k, v, o, causal):
    import torch
    B, H, T, D = q.shape
    s = torch.empty((B * H, T, T), dtype=torch.float32, device=q.device)
    scores_kernel[(triton.cdiv(T, 64), triton.cdiv(T, 64), B * H)](q, k, s, T, D ** -0.5, D=D, BM=64, BN=64,
                                                                    CAUSAL=causal)
    softmax_rows_kernel[(B * H * T,)](s, T, BLOCK=triton.next_power_of_2(T), num_warps=8)
    pv_kernel[(triton.cdiv(T, 64), B * H)](s, v, o, T, D=D, BM=64, BN=64)


def _unused(q, k, v, o, causal):
''')]
LOSES = ["test_flash_attention_triton_memory", "test_flash_attention_triton_throughput"]
