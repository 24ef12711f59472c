"""The masked-lane NaN: lanes that have seen only -inf compute exp(-inf - (-inf)) = NaN."""
EXERCISE = "ch03.online_softmax_triton"
CELL = "online_softmax_triton"
PATCH = [("        base = tl.where(m_new == -float(\"inf\"), 0.0, m_new)  # a lane with no data yet: no NaN\n        d = d * tl.exp(m - base) + tl.exp(x - base)",
          "        d = d * tl.exp(m - m_new) + tl.exp(x - m_new)")]
LOSES = ["test_online_softmax_triton", "test_online_softmax_triton_hidden", "test_online_softmax_triton_bandwidth"]
