"""Correct but slow: 16 x 32 tiles and four warps for every loop of the backward, so each K, V (or Q) tile loaded is
used by few products and the tensor cores wait on memory: it loses the throughput check."""
EXERCISE = "ch08.flash_attention_backward_triton"
CELL = "flash_attention_backward_triton"
PATCH = [("    kn, km, kw = (128, 64, 8) if D <= 64 else (128, 32, 8)", "    kn, km, kw = 32, 16, 4"),
         ("    qm, qn, qw = (128, 64, 8) if D <= 64 else (128, 32, 8)", "    qm, qn, qw = 32, 16, 4")]
LOSES = ["test_flash_attention_backward_triton_throughput"]
