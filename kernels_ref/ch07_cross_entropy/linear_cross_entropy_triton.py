"""Reference: the loss of a linear layer + cross-entropy with the N x V logits never stored (Chapter 7, exercise 2).

One program per tile of BLOCK_N rows of h. It walks the vocabulary in tiles of BLOCK_V words: each tile of logits,
h[rows] @ W[words]^T, is accumulated in float32 registers over H in steps of BLOCK_H (tl.dot), then folded at
once into the rows' online (m, d) (Chapter 3's merge, one tile at a time) and, where the target's word lies in
the tile, into the target logit. Nothing of the logits outlives its tile: the kernel writes only lse and the loss,
2 x 4 bytes per row. The forward pass of Cut Cross-Entropy (Wijmans et al., 2024) is this loop.

Not measured on a GPU yet (the tile sizes are Triton's usual matmul tiles for Hopper: 64 x 128 x 64, 8 warps); the
speed bar in thresholds.toml awaits that measurement."""
import triton
import triton.language as tl

# %% notebook
@triton.jit
def linear_ce_kernel(h_ptr, w_ptr, t_ptr, loss_ptr, lse_ptr, N, H, V,
                     BLOCK_N: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_H: tl.constexpr):
    ### BEGIN SOLUTION
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rmask = rows < N
    t = tl.load(t_ptr + rows, mask=rmask, other=-100)
    kk = tl.arange(0, BLOCK_H)
    vv = tl.arange(0, BLOCK_V)
    h_rows = h_ptr + rows.to(tl.int64)[:, None] * H
    m = tl.full([BLOCK_N], -float("inf"), tl.float32)  # running max of each row's logits
    d = tl.zeros([BLOCK_N], tl.float32)                 # running sum of e^(x - m)
    xt = tl.zeros([BLOCK_N], tl.float32)                # the target's logit, once its tile has passed
    for v0 in range(0, V, BLOCK_V):
        words = v0 + vv
        wmask = words < V
        w_rows = w_ptr + words.to(tl.int64)[:, None] * H
        acc = tl.zeros([BLOCK_N, BLOCK_V], tl.float32)  # this tile of logits, in registers only
        for k0 in range(0, H, BLOCK_H):
            k = k0 + kk
            a = tl.load(h_rows + k[None, :], mask=rmask[:, None] & (k[None, :] < H), other=0.0)
            b = tl.load(w_rows + k[None, :], mask=wmask[:, None] & (k[None, :] < H), other=0.0)
            acc = tl.dot(a, tl.trans(b), acc)
        x = tl.where(wmask[None, :], acc, -float("inf"))  # words past V: e^(-inf - m) = 0
        m_new = tl.maximum(m, tl.max(x, axis=1))
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new[:, None]), axis=1)
        m = m_new
        xt += tl.sum(tl.where(words[None, :] == t[:, None], x, 0.0), axis=1)
    lse = m + tl.log(d)
    tl.store(lse_ptr + rows, lse, mask=rmask)
    tl.store(loss_ptr + rows, tl.where(t == -100, 0.0, lse - xt), mask=rmask)
    ### END SOLUTION


def linear_cross_entropy(h, W, target, loss, lse):
    """Per row i of h (N, H): lse[i] = log Σ_j e^(X[i, j]) and loss[i] = lse[i] - X[i, target[i]] with X = h @ W.T,
    W (V, H); h and W float16 or bfloat16, target int64 (-100: ignored, loss 0), loss and lse float32. The N x V
    logits are never stored."""
    ### BEGIN SOLUTION
    N, H = h.shape
    V = W.shape[0]
    BLOCK_N, BLOCK_V = 64, 128
    BLOCK_H = min(64, max(16, triton.next_power_of_2(H)))
    linear_ce_kernel[(triton.cdiv(N, BLOCK_N),)](h, W, target, loss, lse, N, H, V, BLOCK_N=BLOCK_N,
                                                 BLOCK_V=BLOCK_V, BLOCK_H=BLOCK_H, num_warps=8)
    ### END SOLUTION
