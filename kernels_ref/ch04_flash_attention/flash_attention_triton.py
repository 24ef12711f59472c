"""Reference: FlashAttention forward in Triton (Chapter 4, the graded GPU exercise).

One program owns BLOCK_M query rows of one (batch, head) and walks the keys BLOCK_N at a time,
keeping the online-softmax state (m, l) and the unnormalised output tile in registers:
the T x T score matrix never leaves the chip. fp16/bf16 in and out, fp32 statistics and accumulator.

Two loops: tiles that need no mask (fully below the diagonal, fully inside T) run without one;
only the diagonal tiles (causal) and the last, partial tile are masked. Under a causal mask the
tiles above the diagonal are skipped, which halves the work.
"""
import triton
import triton.language as tl

# %% notebook
@triton.jit
def _attend(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, offs_n, lo, hi, T, qk_scale,
            D: tl.constexpr, BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """Fold the key tiles [lo, hi) into the state (acc, l_i, m_i) of one query tile."""
    ### BEGIN SOLUTION
    for start in range(lo, hi, BLOCK_N):
        if MASKED:
            keep = (start + offs_n)[None, :] < T
            if CAUSAL:
                keep = keep & ((start + offs_n)[None, :] <= offs_m[:, None])
            k = tl.load(k_ptrs + start * D, mask=(start + offs_n)[:, None] < T, other=0.0)
            v = tl.load(v_ptrs + start * D, mask=(start + offs_n)[:, None] < T, other=0.0)
        else:
            k = tl.load(k_ptrs + start * D)
            v = tl.load(v_ptrs + start * D)
        s = tl.dot(q, tl.trans(k)) * qk_scale  # scores in log2 units: exp2 is the fast exp
        if MASKED:
            s = tl.where(keep, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)  # rescales what was accumulated under the old max
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)  # fp16/bf16 operands, fp32 accumulator
        m_i = m_new
    ### END SOLUTION
    return acc, l_i, m_i


@triton.jit
def flash_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, T, qk_scale, D: tl.constexpr,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """Program (i, bh): query rows [i*BLOCK_M, (i+1)*BLOCK_M) of head bh; q, k, v, o contiguous (B*H, T, D)."""
    ### BEGIN SOLUTION
    tile = tl.num_programs(0) - 1 - tl.program_id(0)  # longest (causal) tiles first
    base = tl.program_id(1).to(tl.int64) * T * D
    offs_m = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < T, other=0.0)
    k_ptrs = k_ptr + base + offs_n[:, None] * D + offs_d[None, :]
    v_ptrs = v_ptr + base + offs_n[:, None] * D + offs_d[None, :]
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    full = (T // BLOCK_N) * BLOCK_N  # key tiles entirely inside T
    if CAUSAL:
        lo = tl.minimum(tile * BLOCK_M, full)   # below the diagonal: no mask
        hi = tl.minimum((tile + 1) * BLOCK_M, T)  # nothing above the diagonal
    else:
        lo = full
        hi = T
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, offs_n, 0, lo, T, qk_scale,
                            D, BLOCK_N, False, CAUSAL)
    acc, l_i, m_i = _attend(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, offs_n, lo, hi, T, qk_scale,
                            D, BLOCK_N, True, CAUSAL)
    o = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * D + offs_d[None, :], o.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < T)
    ### END SOLUTION


def flash_attention(q, k, v, o, causal):
    """o = softmax(q kᵀ / sqrt(D) [+ causal mask]) v; q, k, v, o (B, H, T, D), fp16 or bf16, contiguous."""
    ### BEGIN SOLUTION
    B, H, T, D = q.shape
    BLOCK_M, BLOCK_N, warps, stages = (64, 64, 4, 3) if D <= 64 else (128, 64, 8, 3)  # tuned on an H100
    qk_scale = D ** -0.5 * 1.4426950408889634  # 1/sqrt(D), times log2(e) for exp2
    grid = (triton.cdiv(T, BLOCK_M), B * H)
    flash_attention_kernel[grid](q, k, v, o, T, qk_scale, D=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                                 CAUSAL=causal, num_warps=warps, num_stages=stages)
    ### END SOLUTION
