"""Attack: no backward kernel at all: the gradients come from PyTorch's autograd run through PyTorch's own attention
(recomputed from q, k, v) and are copied into dq, dk, dv. The judge must see that PyTorch, not the student's kernel,
did the work (and the T x T matrix PyTorch keeps for its backward costs the memory check)."""
EXERCISE = "ch08.flash_attention_backward_triton"
CELL = "flash_attention_backward_triton"
PATCH = [("    sm_scale = D ** -0.5\n    delta = torch.empty((B, H, T)",
          "    sm_scale = D ** -0.5\n"
          "    import torch.nn.functional as F\n"
          "    leaves = [t.detach().float().requires_grad_() for t in (q, k, v)]\n"
          "    s = leaves[0] @ leaves[1].transpose(-1, -2) * sm_scale\n"
          "    if causal:\n"
          "        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1), float('-inf'))\n"
          "    out = torch.softmax(s, -1) @ leaves[2]\n"
          "    gq, gk, gv = torch.autograd.grad(out, leaves, do.float())\n"
          "    dq.copy_(gq); dk.copy_(gk); dv.copy_(gv)\n"
          "    return\n"
          "    delta = torch.empty((B, H, T)")]
LOSES = ["test_flash_attention_backward_triton", "test_flash_attention_backward_triton_hidden",
         "test_flash_attention_backward_triton_memory", "test_flash_attention_backward_triton_throughput"]
