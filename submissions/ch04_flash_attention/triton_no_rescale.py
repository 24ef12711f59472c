"""Forgets to rescale the accumulator when the running max grows (acc * alpha)."""
EXERCISE = "ch04.flash_attention_triton"
CELL = "flash_attention_triton"
PATCH = [("""        acc = acc * alpha[:, None]
""", "")]
LOSES = ["test_flash_attention_triton", "test_flash_attention_triton_hidden", "test_flash_attention_triton_memory",
         "test_flash_attention_triton_throughput"]
