"""Correct, but computes the tiles above the causal diagonal too and masks them away (twice the work)."""
EXERCISE = "ch04.flash_attention_triton"
CELL = "flash_attention_triton"
PATCH = [("        hi = tl.minimum((tile + 1) * BLOCK_M, T)  # nothing above the diagonal\n", "        hi = T\n")]
LOSES = ["test_flash_attention_triton_throughput"]
