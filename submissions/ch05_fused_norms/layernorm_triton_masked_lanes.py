"""Forgets that masked lanes hold 0: their (0 - mean)² inflates the variance of rows shorter than BLOCK."""
EXERCISE = "ch05.layernorm_triton"
CELL = "layernorm_triton"
PATCH = [("    d = tl.where(mask, x - mean, 0.0)  # masked lanes must not add (0 - mean)²\n", "    d = x - mean\n")]
LOSES = ["test_layernorm_triton", "test_layernorm_triton_hidden", "test_layernorm_triton_bandwidth"]
