"""Correct, and builds the whole T x T score matrix in an anonymous mmap, where tracemalloc does not look,
computing in place so that no NumPy array of that size is ever made (loses only memory: the process's peak
resident memory sees every allocator)."""
EXERCISE = "ch04.attention_blockwise"
CELL = "attention_blockwise"
PATCH = [("""    T, D = q.shape
    q = q / np.sqrt(D)""", """    T, D = q.shape
    import mmap
    got = sorted(tiles, key=lambda t: t[0])
    K = np.concatenate([k for _, k, _ in got])
    V = np.concatenate([v for _, _, v in got])
    buf = mmap.mmap(-1, T * T * 8)
    s = np.frombuffer(buf, dtype=np.float64).reshape(T, T)
    np.matmul(q / np.sqrt(D), K.T, out=s)
    if causal:
        np.putmask(s, np.arange(T)[None, :] > np.arange(T)[:, None], -np.inf)
    np.subtract(s, s.max(axis=1, keepdims=True), out=s)
    np.exp(s, out=s)
    np.divide(s, s.sum(axis=1, keepdims=True), out=s)
    return s @ V
    q = q / np.sqrt(D)""")]
LOSES = ["test_attention_blockwise_memory"]
