"""Causal mask off by one on the diagonal tile: query i does not see key i (row 0 sees nothing: NaN)."""
EXERCISE = "ch04.flash_attention_triton"
CELL = "flash_attention_triton"
PATCH = [("(start + offs_n)[None, :] <= offs_m[:, None]", "(start + offs_n)[None, :] < offs_m[:, None]")]
LOSES = ["test_flash_attention_triton", "test_flash_attention_triton_hidden", "test_flash_attention_triton_throughput"]
