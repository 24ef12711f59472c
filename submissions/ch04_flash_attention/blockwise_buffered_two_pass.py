"""Keeps every tile in a list, then two passes over them (every row's max first, then the sums with that max,
no rescaling): right numbers and one read of the stream, but it holds all of K and V (loses only memory)."""
EXERCISE = "ch04.attention_blockwise"
CELL = "attention_blockwise"
PATCH = [("""    T, D = q.shape
    q = q / np.sqrt(D)""", """    T, D = q.shape
    kept = list(tiles)  # every tile kept, so that the keys can be read twice
    qs, rows = q / np.sqrt(D), np.arange(T)[:, None]

    def scores(start, k):
        s = qs @ k.T
        return np.where(start + np.arange(len(k))[None, :] <= rows, s, -np.inf) if causal else s
    m = np.full(T, -np.inf)
    for start, k, _ in kept:  # pass 1: each row's max over all keys
        m = np.maximum(m, scores(start, k).max(axis=1))
    safe = np.where(np.isfinite(m), m, 0.0)
    ell, acc = np.zeros(T), np.zeros((T, D))
    for start, k, v in kept:  # pass 2: the sums, with the final max
        p = np.exp(scores(start, k) - safe[:, None])
        ell += p.sum(axis=1)
        acc += p @ v
    return acc / ell[:, None]
    q = q / np.sqrt(D)""")]
LOSES = ["test_attention_blockwise_memory"]
