"""The D term dropped: dS = P ∘ dP instead of P ∘ (dP - D) with D = rowsum(dO ∘ O), in both passes. dV is still
right (it needs no dS); dQ and dK are wrong by a term along each row's P."""
EXERCISE = "ch08.flash_attention_backward_triton"
CELL = "flash_attention_backward_triton"
PATCH = [("dst = pt * (dpt - delta[None, :])", "dst = pt * dpt"),
         ("ds = p * (dp - delta[:, None])", "ds = p * dp")]
LOSES = ["test_flash_attention_backward_triton", "test_flash_attention_backward_triton_hidden",
         "test_flash_attention_backward_triton_memory", "test_flash_attention_backward_triton_throughput"]
