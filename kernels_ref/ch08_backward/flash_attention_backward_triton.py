"""Reference: FlashAttention-2 backward in Triton (Chapter 8, exercise 4).

S = scale * Q Kᵀ (scale = 1/sqrt(D), causal: S_ij = -inf for j > i), P = softmax(S), O = P V. The forward
(given, Chapter 4's kernel) also stores L_i = log sum_j exp(S_ij), so that the backward recomputes any tile of P
as exp(S - L) without a running max. Backward, for one head:
    D_i = rowsum(dO ∘ O)_i                      (preprocessing kernel: one read of dO and O)
    dV  = Pᵀ dO,  dP = dO Vᵀ,  dS = P ∘ (dP - D),  dQ = scale · dS K,  dK = scale · dSᵀ Q
Kernel 2, one program per key block (BLOCK_N keys): walks every query block that sees it, recomputes P
there, and accumulates dV and dK in registers; each is written once. Kernel 3, one program per query block:
walks the key blocks and accumulates dQ. Each output element has one owner, so no atomics and the same bits
on every run; the price is computing Q Kᵀ and dO Vᵀ twice (7 matrix products per tile pair in all instead of
5). No T x T matrix ever reaches memory: L and D are T floats per head.

Padding rows of the last tile load as 0 (q, k, v, dO) and so add exactly 0 to every product, except in the dQ
pass, where a padding key's score must be masked: exp(0 - L) overflows when every real score is very negative.
Block sizes, warps and stages are first choices for an H100/H200, to be tuned there."""
import torch
import triton
import triton.language as tl

# %% notebook
LOG2E = 1.4426950408889634  # exp(x) = exp2(x * log2(e)): exp2 is the GPU's fast exponential


@triton.jit
def attention_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, T, qk_scale, D: tl.constexpr,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """Chapter 4's forward (one masked loop, for brevity), which also stores L = m + log(l) (natural log)."""
    tile = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * T * D
    offs_m = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < T, other=0.0)
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    hi = tl.minimum((tile + 1) * BLOCK_M, T) if CAUSAL else T
    for start in range(0, hi, BLOCK_N):
        cols = start + offs_n
        kv = base + cols[:, None] * D + offs_d[None, :]
        k = tl.load(k_ptr + kv, mask=cols[:, None] < T, other=0.0)
        v = tl.load(v_ptr + kv, mask=cols[:, None] < T, other=0.0)
        keep = cols[None, :] < T
        if CAUSAL:
            keep = keep & (cols[None, :] <= offs_m[:, None])
        s = tl.where(keep, tl.dot(q, tl.trans(k)) * qk_scale, -float("inf"))  # log2 units
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    row = offs_m < T
    tl.store(o_ptr + base + offs_m[:, None] * D + offs_d[None, :], (acc / l_i[:, None]).to(o_ptr.dtype.element_ty),
             mask=row[:, None])
    tl.store(lse_ptr + tl.program_id(1).to(tl.int64) * T + offs_m, (m_i + tl.log2(l_i)) / 1.4426950408889634,
             mask=row)


def attention_forward(q, k, v, o, lse, causal):
    """o = softmax(q kᵀ / sqrt(D)) v and lse = log-sum-exp of each row's scores (float32, (B, H, T))."""
    B, H, T, D = q.shape
    grid = (triton.cdiv(T, 64), B * H)
    attention_forward_kernel[grid](q, k, v, o, lse, T, D ** -0.5 * LOG2E, D=D, BLOCK_M=64, BLOCK_N=64,
                                   CAUSAL=causal, num_warps=4 if D <= 64 else 8, num_stages=3)


@triton.jit
def attention_bwd_delta_kernel(o_ptr, do_ptr, delta_ptr, T, D: tl.constexpr, BLOCK: tl.constexpr):
    """delta[bh, i] = sum_d dO[bh, i, d] * O[bh, i, d] for BLOCK rows i of head bh, in float32."""
    ### BEGIN SOLUTION
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offs_d = tl.arange(0, D)
    bh = tl.program_id(1).to(tl.int64)
    ptrs = bh * T * D + offs[:, None] * D + offs_d[None, :]
    o = tl.load(o_ptr + ptrs, mask=offs[:, None] < T, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + ptrs, mask=offs[:, None] < T, other=0.0).to(tl.float32)
    tl.store(delta_ptr + bh * T + offs, tl.sum(o * do, 1), mask=offs < T)
    ### END SOLUTION


@triton.jit
def _dkdv_tiles(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, base, row0, offs_n, lo, hi, T, qk_scale,
                D: tl.constexpr, BLOCK_M: tl.constexpr, MASKED: tl.constexpr):
    """Fold the query tiles [lo, hi) into one key block's dk, dv (all in transposed form: keys x queries)."""
    ### BEGIN SOLUTION
    offs_d = tl.arange(0, D)
    for start in range(lo, hi, BLOCK_M):
        offs_m = start + tl.arange(0, BLOCK_M)
        rows = offs_m[:, None] < T
        q = tl.load(q_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=rows, other=0.0)
        do = tl.load(do_ptr + base + offs_m[:, None] * D + offs_d[None, :], mask=rows, other=0.0)
        lse = tl.load(lse_ptr + row0 + offs_m, mask=offs_m < T, other=0.0) * 1.4426950408889634
        delta = tl.load(delta_ptr + row0 + offs_m, mask=offs_m < T, other=0.0)
        st = tl.dot(k, tl.trans(q)) * qk_scale  # Sᵀ in log2 units: (BLOCK_N keys, BLOCK_M queries)
        if MASKED:  # causal, on the diagonal: key j is seen by query i only if j <= i
            st = tl.where(offs_n[:, None] <= offs_m[None, :], st, -float("inf"))
        pt = tl.exp2(st - lse[None, :])  # Pᵀ, recomputed; padding queries: q = dO = 0 add nothing
        dv = tl.dot(pt.to(do.dtype), do, dv)  # dV += Pᵀ dO
        dpt = tl.dot(v, tl.trans(do))  # dPᵀ = V dOᵀ
        dst = pt * (dpt - delta[None, :])  # dSᵀ = Pᵀ ∘ (dPᵀ - D)
        dk = tl.dot(dst.to(q.dtype), q, dk)  # dK += dSᵀ Q (times scale at the end)
    ### END SOLUTION
    return dk, dv


@triton.jit
def attention_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, T, sm_scale,
                              qk_scale, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                              CAUSAL: tl.constexpr):
    """Program (j, bh) owns keys [j*BLOCK_N, (j+1)*BLOCK_N) of head bh and writes their dK and dV."""
    ### BEGIN SOLUTION
    tl.static_assert(BLOCK_N % BLOCK_M == 0)  # the diagonal starts on a query-tile boundary
    start_n = tl.program_id(0) * BLOCK_N
    row0 = tl.program_id(1).to(tl.int64) * T
    base = row0 * D
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    kv = base + offs_n[:, None] * D + offs_d[None, :]
    k = tl.load(k_ptr + kv, mask=offs_n[:, None] < T, other=0.0)
    v = tl.load(v_ptr + kv, mask=offs_n[:, None] < T, other=0.0)
    dk = tl.zeros([BLOCK_N, D], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, D], dtype=tl.float32)
    if CAUSAL:  # queries before start_n see none of these keys; the diagonal tiles need the mask
        diag_end = tl.minimum(start_n + BLOCK_N, T)
        dk, dv = _dkdv_tiles(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, base, row0, offs_n, start_n,
                             diag_end, T, qk_scale, D, BLOCK_M, True)
        dk, dv = _dkdv_tiles(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, base, row0, offs_n, diag_end, T,
                             T, qk_scale, D, BLOCK_M, False)
    else:
        dk, dv = _dkdv_tiles(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, base, row0, offs_n, 0, T,
                             T, qk_scale, D, BLOCK_M, False)
    tl.store(dk_ptr + kv, (dk * sm_scale).to(dk_ptr.dtype.element_ty), mask=offs_n[:, None] < T)
    tl.store(dv_ptr + kv, dv.to(dv_ptr.dtype.element_ty), mask=offs_n[:, None] < T)
    ### END SOLUTION


@triton.jit
def _dq_tiles(dq, q, do, lse, delta, k_ptr, v_ptr, base, offs_m, lo, hi, T, qk_scale,
              D: tl.constexpr, BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    """Fold the key tiles [lo, hi) into one query block's dq."""
    ### BEGIN SOLUTION
    offs_d = tl.arange(0, D)
    for start in range(lo, hi, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        kv = base + offs_n[:, None] * D + offs_d[None, :]
        k = tl.load(k_ptr + kv, mask=offs_n[:, None] < T, other=0.0)
        v = tl.load(v_ptr + kv, mask=offs_n[:, None] < T, other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        if MASKED:  # the last key tile (padding keys) and, causal, the diagonal
            keep = offs_n[None, :] < T
            if CAUSAL:
                keep = keep & (offs_n[None, :] <= offs_m[:, None])
            s = tl.where(keep, s, -float("inf"))
        p = tl.exp2(s - lse[:, None])
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dq = tl.dot(ds.to(k.dtype), k, dq)  # dQ += dS K (times scale at the end)
    ### END SOLUTION
    return dq


@triton.jit
def attention_bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, T, sm_scale, qk_scale,
                            D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """Program (i, bh) owns queries [i*BLOCK_M, (i+1)*BLOCK_M) of head bh and writes their dQ."""
    ### BEGIN SOLUTION
    tl.static_assert(BLOCK_M % BLOCK_N == 0)  # the diagonal starts on a key-tile boundary
    start_m = tl.program_id(0) * BLOCK_M
    row0 = tl.program_id(1).to(tl.int64) * T
    base = row0 * D
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D)
    rows = offs_m[:, None] < T
    qo = base + offs_m[:, None] * D + offs_d[None, :]
    q = tl.load(q_ptr + qo, mask=rows, other=0.0)
    do = tl.load(do_ptr + qo, mask=rows, other=0.0)
    lse = tl.load(lse_ptr + row0 + offs_m, mask=offs_m < T, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_ptr + row0 + offs_m, mask=offs_m < T, other=0.0)
    dq = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    if CAUSAL:  # keys before start_m: no mask; the diagonal tiles (and padding keys): masked; none above
        lo = start_m
        hi = tl.minimum(start_m + BLOCK_M, T)
    else:
        lo = (T // BLOCK_N) * BLOCK_N
        hi = T
    dq = _dq_tiles(dq, q, do, lse, delta, k_ptr, v_ptr, base, offs_m, 0, lo, T, qk_scale, D, BLOCK_N, False, CAUSAL)
    dq = _dq_tiles(dq, q, do, lse, delta, k_ptr, v_ptr, base, offs_m, lo, hi, T, qk_scale, D, BLOCK_N, True, CAUSAL)
    tl.store(dq_ptr + qo, (dq * sm_scale).to(dq_ptr.dtype.element_ty), mask=rows)
    ### END SOLUTION


def flash_attention_backward(q, k, v, o, lse, do, dq, dk, dv, causal):
    """dq, dk, dv of o = softmax(q kᵀ / sqrt(D) [+ causal mask]) v, given do and the forward's o and lse
    (float32 (B, H, T), natural log); q, k, v, o, do, dq, dk, dv (B, H, T, D) contiguous, fp16 or bf16."""
    ### BEGIN SOLUTION
    B, H, T, D = q.shape
    sm_scale = D ** -0.5
    delta = torch.empty((B, H, T), device=q.device, dtype=torch.float32)  # O(T): D_i for every row
    attention_bwd_delta_kernel[(triton.cdiv(T, 128), B * H)](o, do, delta, T, D=D, BLOCK=128, num_warps=4)
    kn, km, kw = (128, 64, 8) if D <= 64 else (128, 32, 8)  # dK/dV: keys per program, query tile, warps
    attention_bwd_dkdv_kernel[(triton.cdiv(T, kn), B * H)](q, k, v, do, lse, delta, dk, dv, T, sm_scale,
                                                           sm_scale * LOG2E, D=D, BLOCK_M=km, BLOCK_N=kn,
                                                           CAUSAL=causal, num_warps=kw, num_stages=2)
    qm, qn, qw = (128, 64, 8) if D <= 64 else (128, 32, 8)  # dQ: queries per program, key tile, warps
    attention_bwd_dq_kernel[(triton.cdiv(T, qm), B * H)](q, k, v, do, lse, delta, dq, T, sm_scale,
                                                         sm_scale * LOG2E, D=D, BLOCK_M=qm, BLOCK_N=qn,
                                                         CAUSAL=causal, num_warps=qw, num_stages=2)
    ### END SOLUTION
