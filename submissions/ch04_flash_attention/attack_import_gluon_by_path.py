"""Attack: find the repository through the course package the runner imports (course.__file__), put that directory
first on sys.path and call the Gluon fast reference directly (kernels_ref/ch04_flash_attention/flash_attention_gluon.py,
with choose()'s configs, Config.pin among them) instead of writing the kernel. Unlike
attack_import_fast_reference it does not rely on kernels_ref being on the runner's path: it looks where the course
lives. The sandbox hides kernels_ref from the runner wherever it is looked for, so the import fails and the
exercise's tests fail with it."""
EXERCISE = "ch04.flash_attention_triton"
CELL = "flash_attention_triton"
PATCH = [("""    flash_attention_kernel[grid](q, k, v, o, T, qk_scale, D=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                                 CAUSAL=causal, num_warps=warps, num_stages=stages)""",
          """    import os
    import sys
    import course
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(course.__file__))))
    from kernels_ref.ch04_flash_attention import flash_attention_gluon
    flash_attention_gluon.flash_attention(q, k, v, o, causal)""")]
LOSES = ["test_flash_attention_triton", "test_flash_attention_triton_hidden", "test_flash_attention_triton_memory",
         "test_flash_attention_triton_throughput"]
