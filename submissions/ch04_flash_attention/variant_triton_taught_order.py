"""Legitimate variant: the kernel as Exercise 2's text describes it: query tile = program_id(0) in launch order (no
longest-first reordering), head offsets in int32, lo = i0 and hi = min(i0 + BLOCK_M, T) under a causal mask, the
text's tile sizes and Triton's default num_stages."""
EXERCISE = "ch04.flash_attention_triton"
CELL = "flash_attention_triton"
PATCH = [('''    tile = tl.num_programs(0) - 1 - tl.program_id(0)  # longest (causal) tiles first
    base = tl.program_id(1).to(tl.int64) * T * D
''', '''    tile = tl.program_id(0)                            # this program's query tile
    base = tl.program_id(1) * T * D                    # head bh starts at bh * T * D
'''), ('''        lo = tl.minimum(tile * BLOCK_M, full)   # below the diagonal: no mask
        hi = tl.minimum((tile + 1) * BLOCK_M, T)  # nothing above the diagonal
''', '''        lo = tile * BLOCK_M                     # i0: key tiles left of the diagonal need no mask
        hi = tl.minimum(lo + BLOCK_M, T)        # the diagonal tile(s); nothing above them
'''), ('''    BLOCK_M, BLOCK_N, warps, stages = (64, 64, 4, 3) if D <= 64 else (128, 64, 8, 3)  # tuned on an H100
''', '''    if D == 64:
        BLOCK_M, BLOCK_N, warps = 64, 64, 4
    else:
        BLOCK_M, BLOCK_N, warps = 128, 64, 8
'''), ('''                                 CAUSAL=causal, num_warps=warps, num_stages=stages)
''', '''                                 CAUSAL=causal, num_warps=warps)
''')]
LOSES = []
