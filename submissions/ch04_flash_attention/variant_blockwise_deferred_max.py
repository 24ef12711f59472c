"""Legitimate variant: rescale with exp(m_old - m_new) computed as a ratio only where the max grew,
and normalise with a reciprocal at the end."""
EXERCISE = "ch04.attention_blockwise"
CELL = "attention_blockwise"
PATCH = [("        alpha = np.exp(m - safe)  # how much the old max overstated: rescale what we have\n",
          "        alpha = np.where(m < m_new, np.exp(m - safe), 1.0)  # rescale only where the max grew\n"),
         ("    return acc / ell[:, None]\n", "    return acc * (1.0 / ell)[:, None]\n")]
LOSES = []
