"""dgamma's per-program shares carried in bfloat16 (rounded after every row): with 8 significant bits a running sum
drops the low bits of every term it adds, and a sum of equal terms stalls after about 256 of them."""
EXERCISE = "ch08.rmsnorm_backward_triton"
CELL = "rmsnorm_backward_triton"
PATCH = [("        dg += dy * xhat\n", "        dg = (dg + dy * xhat).to(tl.bfloat16).to(tl.float32)\n")]
LOSES = ["test_rmsnorm_backward_triton", "test_rmsnorm_backward_triton_hidden", "test_rmsnorm_backward_triton_bandwidth"]
