"""P stored instead of recomputed: the key-block pass writes every tile of P it recomputes to a (B·H, T, T) float32
buffer, and the dQ pass loads P from it instead of recomputing exp(S - L): right gradients, 4 T² bytes per head,
four times the memory limit (a quarter of one head's T x T float32 matrix). Loses only the memory test."""
EXERCISE = "ch08.flash_attention_backward_triton"
CELL = "flash_attention_backward_triton"
PATCH = [('                D: tl.constexpr, BLOCK_M: tl.constexpr, MASKED: tl.constexpr):',
          '                D: tl.constexpr, BLOCK_M: tl.constexpr, MASKED: tl.constexpr, p_ptr):'),
         ('        pt = tl.exp2(st - lse[None, :])  # Pᵀ, recomputed; padding queries: q = dO = 0 add nothing\n',
          '        pt = tl.exp2(st - lse[None, :])  # Pᵀ, recomputed; padding queries: q = dO = 0 add nothing\n        tl.store(p_ptr + row0 * T + offs_m[None, :] * T + offs_n[:, None], pt,  # kept for the dQ pass\n                 mask=(offs_m[None, :] < T) & (offs_n[:, None] < T))\n'),
         ('T, qk_scale, D, BLOCK_M, True)',
          'T, qk_scale, D, BLOCK_M, True, p_ptr)'),
         ('                             T, qk_scale, D, BLOCK_M, False)\n    else:',
          '                             T, qk_scale, D, BLOCK_M, False, p_ptr)\n    else:'),
         ('                             T, qk_scale, D, BLOCK_M, False)\n    tl.store',
          '                             T, qk_scale, D, BLOCK_M, False, p_ptr)\n    tl.store'),
         ('def attention_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, T, sm_scale,',
          'def attention_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, p_ptr, T, sm_scale,'),
         ('              D: tl.constexpr, BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr):',
          '              D: tl.constexpr, BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr, p_ptr, row0):'),
         ('        p = tl.exp2(s - lse[:, None])\n',
          '        p = tl.load(p_ptr + row0 * T + offs_m[:, None] * T + offs_n[None, :],  # stored, not recomputed\n                    mask=(offs_m[:, None] < T) & (offs_n[None, :] < T), other=0.0)\n'),
         ('D, BLOCK_N, False, CAUSAL)',
          'D, BLOCK_N, False, CAUSAL, p_ptr, row0)'),
         ('D, BLOCK_N, True, CAUSAL)',
          'D, BLOCK_N, True, CAUSAL, p_ptr, row0)'),
         ('def attention_bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, T, sm_scale, qk_scale,',
          'def attention_bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, p_ptr, T, sm_scale, qk_scale,'),
         ('(q, k, v, do, lse, delta, dk, dv, T, sm_scale,',
          '(q, k, v, do, lse, delta, dk, dv, p, T, sm_scale,'),
         ('(q, k, v, do, lse, delta, dq, T, sm_scale,',
          '(q, k, v, do, lse, delta, dq, p, T, sm_scale,'),
         ('    kn, km, kw = (128, 64, 8)',
          '    p = torch.empty((B * H, T, T), device=q.device, dtype=torch.float32)  # P, stored: 4 T² bytes per head\n    kn, km, kw = (128, 64, 8)')]
LOSES = ["test_flash_attention_backward_triton_memory"]
