"""Correct, but gathers all of K and V and builds the whole T x T score matrix (loses only memory)."""
EXERCISE = "ch04.attention_blockwise"
CELL = "attention_blockwise"
PATCH = [("""    T, D = q.shape
    q = q / np.sqrt(D)""", """    T, D = q.shape
    got = sorted(tiles, key=lambda t: t[0])
    K = np.concatenate([k for _, k, _ in got])
    V = np.concatenate([v for _, _, v in got])
    s = q @ K.T / np.sqrt(D)
    if causal:
        s = np.where(np.arange(T)[None, :] <= np.arange(T)[:, None], s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ V
    q = q / np.sqrt(D)""")]
LOSES = ["test_attention_blockwise_memory"]
