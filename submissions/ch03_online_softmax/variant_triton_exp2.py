"""Legitimate variant: the online softmax in base 2 (scores times log2(e), exp2 everywhere)."""
EXERCISE = "ch03.online_softmax_triton"
CELL = "online_softmax_triton"
PATCH = [
    ("""        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new""", """        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32) * 1.4426950408889634
        m_new"""),
    ("        d = d * tl.exp(m - base) + tl.exp(x - base)\n", "        d = d * tl.exp2(m - base) + tl.exp2(x - base)\n"),
    ("    d_row = tl.sum(d * tl.exp(m - m_row), axis=0)", "    d_row = tl.sum(d * tl.exp2(m - m_row), axis=0)"),
    ("""        x = tl.load(x_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
        tl.store(y_row + cols, (tl.exp(x - m_row) * inv)""", """        x = tl.load(x_row + cols, mask=mask, other=-float("inf")).to(tl.float32) * 1.4426950408889634
        tl.store(y_row + cols, (tl.exp2(x - m_row) * inv)"""),
]
LOSES = []
