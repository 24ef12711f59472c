"""The D term dropped: dS = P ∘ dP instead of P ∘ (dP - D) with D = rowsum(dO ∘ O), in both passes. dV is still
right (it needs no dS); dQ and dK are wrong by a term along each row's P, by less than 5% of the largest term of
their formulas on the memory check's random inputs (seen in CPU validate), so that check, which wants a working
kernel, passes it."""
EXERCISE = "ch08.flash_attention_backward_triton"
CELL = "flash_attention_backward_triton"
PATCH = [("dst = pt * (dpt - delta[None, :])", "dst = pt * dpt"),
         ("ds = p * (dp - delta[:, None])", "ds = p * dp")]
LOSES = ["test_flash_attention_backward_triton", "test_flash_attention_backward_triton_hidden",
         "test_flash_attention_backward_triton_throughput"]  # its gradients are within the memory check's 5%
