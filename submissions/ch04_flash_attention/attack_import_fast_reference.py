"""Attack: import the course's fast FlashAttention reference (kernels_ref/ch04_flash_attention/flash_attention_fast.py:
the Gluon kernel on Hopper, the teaching solution elsewhere) instead of writing one. It
sits beside the grader; the runner must not be able to import it."""
EXERCISE = "ch04.flash_attention_triton"
CELL = "flash_attention_triton"
PATCH = [("""    flash_attention_kernel[grid](q, k, v, o, T, qk_scale, D=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                                 CAUSAL=causal, num_warps=warps, num_stages=stages)""",
          "    pass\n\n\nfrom kernels_ref.ch04_flash_attention.flash_attention_fast import flash_attention  # noqa")]
LOSES = ["test_flash_attention_triton", "test_flash_attention_triton_hidden", "test_flash_attention_triton_memory",
         "test_flash_attention_triton_throughput"]
