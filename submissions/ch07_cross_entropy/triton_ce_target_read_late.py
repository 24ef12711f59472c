"""Triton cross-entropy: the loss is computed after the gradient pass, reading x[target] from the row that,
in place (dlogits is logits), now holds the gradient: right out of place, wrong in place."""
EXERCISE = "ch07.cross_entropy_triton"
CELL = "cross_entropy_triton"
PATCH = [("""        xt = tl.load(x_ptr + base + t).to(tl.float32)  # before pass 2: in place, it overwrites x[t]
        loss = lse - (1.0 - smoothing) * xt - smoothing / cols * sx + z_weight * lse * lse
        tl.store(loss_ptr + row, loss)
""", ""), ("""            tl.store(dx_ptr + base + start + c, g.to(dx_ptr.dtype.element_ty), mask=mask, eviction_policy="evict_first")
""", """            tl.store(dx_ptr + base + start + c, g.to(dx_ptr.dtype.element_ty), mask=mask, eviction_policy="evict_first")
        xt = tl.load(x_ptr + base + t).to(tl.float32)
        loss = lse - (1.0 - smoothing) * xt - smoothing / cols * sx + z_weight * lse * lse
        tl.store(loss_ptr + row, loss)
""")]
LOSES = ["test_cross_entropy_triton_hidden"]
