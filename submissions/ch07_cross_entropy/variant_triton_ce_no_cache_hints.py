"""Legitimate variant: the two passes without the L2 eviction hints (what most students will write). Slower on
long rows (the second read comes from memory), but above the bar, which sits between two reads and three: it
must pass every check."""
EXERCISE = "ch07.cross_entropy_triton"
CELL = "cross_entropy_triton"
PATCH = [("""            x = tl.load(x_ptr + base + start + c, mask=mask, other=-float("inf"),
                        eviction_policy="evict_last").to(tl.float32)
""", """            x = tl.load(x_ptr + base + start + c, mask=mask, other=-float("inf")).to(tl.float32)
"""), (""", other=0.0, eviction_policy="evict_first").to(tl.float32)""", """, other=0.0).to(tl.float32)"""),
         (""", mask=mask, eviction_policy="evict_first")""", """, mask=mask)""")]
LOSES = []
