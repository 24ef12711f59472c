"""Reference: attention over key/value tiles with online softmax, in NumPy (Chapter 4, exercise 1).

The tiles arrive once, in any order; the state per query row is (m, ell, acc): running max, running
sum of exponentials and the unnormalised output, rescaled whenever the max grows.
"""
import numpy as np

# %% notebook
def attention_blockwise(q, tiles, causal):
    """q: (T, D) float64. tiles: yields (start, k, v) once each, k and v (b, D) = rows start..start+b-1
    of K and V. Return softmax(q Kᵀ / sqrt(D) [+ causal mask]) V, (T, D) float64."""
    ### BEGIN SOLUTION
    T, D = q.shape
    q = q / np.sqrt(D)  # scale once, before the dot products
    m = np.full(T, -np.inf)  # running max of each query row
    ell = np.zeros(T)  # running sum of exp(s - m)
    acc = np.zeros((T, D))  # running sum of exp(s - m) * v
    rows = np.arange(T)[:, None]
    for start, k, v in tiles:
        s = q @ k.T  # (T, b): one tile of scores, never the whole T x T matrix
        if causal:
            s = np.where(start + np.arange(len(k))[None, :] <= rows, s, -np.inf)
        m_new = np.maximum(m, s.max(axis=1))
        safe = np.where(np.isfinite(m_new), m_new, 0.0)  # a row with nothing yet: no inf - inf
        p = np.exp(s - safe[:, None])
        alpha = np.exp(m - safe)  # how much the old max overstated: rescale what we have
        ell = ell * alpha + p.sum(axis=1)
        acc = acc * alpha[:, None] + p @ v
        m = m_new
    return acc / ell[:, None]
    ### END SOLUTION
