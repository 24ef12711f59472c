"""Legitimate variant: the running state in base 2 (each logit scaled by log2 e, e^v as 2^v, lse = (m + log2 d)
· ln 2), the form GPUs evaluate natively; within the tolerance, so it must pass every check."""
EXERCISE = "ch07.linear_cross_entropy_triton"
CELL = "linear_cross_entropy_triton"
PATCH = [('        x = tl.where(wmask[None, :], acc, -float("inf"))  # words past V: e^(-inf - m) = 0\n',
          '        x = tl.where(wmask[None, :], acc * 1.4426950408889634, -float("inf"))\n'),
         ("        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new[:, None]), axis=1)\n",
          "        d = d * tl.exp2(m - m_new) + tl.sum(tl.exp2(x - m_new[:, None]), axis=1)\n"),
         ("        xt += tl.sum(tl.where(words[None, :] == t[:, None], x, 0.0), axis=1)\n",
          "        xt += tl.sum(tl.where(words[None, :] == t[:, None], acc, 0.0), axis=1)\n"),
         ("    lse = m + tl.log(d)\n", "    lse = (m + tl.log2(d)) * 0.6931471805599453\n")]
LOSES = []
