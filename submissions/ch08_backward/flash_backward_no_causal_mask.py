"""The causal mask kept in the forward but dropped in the backward: every query receives gradient from the keys after
it (P recomputed as exp(S - L) there is not even at most 1), and every key from the queries before it."""
EXERCISE = "ch08.flash_attention_backward_triton"
CELL = "flash_attention_backward_triton"
PATCH = [('            st = tl.where(offs_n[:, None] <= offs_m[None, :], st, -float("inf"))\n',
          "            st = st  # (no causal mask)\n"),
         ("                keep = keep & (offs_n[None, :] <= offs_m[:, None])\n",
          "                keep = keep  # (no causal mask)\n")]
LOSES = ["test_flash_attention_backward_triton", "test_flash_attention_backward_triton_hidden",
         "test_flash_attention_backward_triton_throughput"]
