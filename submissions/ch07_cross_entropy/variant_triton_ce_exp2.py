"""Legitimate variant: e^v as 2^(v · log2 e) in both passes and log d as log2 d · ln 2, the forms GPUs evaluate
natively; within the tolerance, so it must pass every check."""
EXERCISE = "ch07.cross_entropy_triton"
CELL = "cross_entropy_triton"
PATCH = [("            d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)  # padding: e^(-inf) = 0\n",
          "            d = d * tl.exp2((m - m_new) * 1.4426950408889634) + tl.sum(tl.exp2((x - m_new) * "
          "1.4426950408889634), axis=0)\n"),
         ("        lse = m + tl.log(d)\n", "        lse = m + tl.log2(d) * 0.6931471805599453\n"),
         ("            g = tl.exp(x - lse) * grow - smoothing / cols\n",
          "            g = tl.exp2((x - lse) * 1.4426950408889634) * grow - smoothing / cols\n")]
LOSES = []
