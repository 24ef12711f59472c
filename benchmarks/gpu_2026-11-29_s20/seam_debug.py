"""Twentieth session: where the overlapped seams (Config.overlap) go wrong when causal with two query buffers
(run a: errors near 0.5, an illegal address). One config, one shape per process:
    python benchmarks/gpu_2026-11-29_s20/seam_debug.py NAME T SMS [B H D]
NAME: q2ov, q1ov, q2 (BALANCED_64 with q_bufs=2 and overlap, overlap alone, q_bufs=2 alone). Prints the table and
the largest error of each 64-row block of every head (the rows of one consumer warpgroup of one query tile)."""
import sys

import torch

from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg

name, T, sms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
B, H, D = (int(x) for x in sys.argv[4:7]) if len(sys.argv) > 4 else (1, 1, 64)
cfg = {"q2ov": fg.BALANCED_64._replace(q_bufs=2, overlap=True), "q1ov": fg.BALANCED_64._replace(overlap=True),
       "q2": fg.BALANCED_64._replace(q_bufs=2)}[name]
torch.manual_seed(0)
q, k, v = (torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
o = torch.zeros_like(q)
print(cfg.name(), "T", T, "SMs", sms, "table", fg.schedule(T, B * H, cfg, True, sms), flush=True)
fg.flash_attention(q, k, v, o, True, cfg, num_sms=sms)
torch.cuda.synchronize()
ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
e = (o.float() - ref).abs().amax(-1).view(B * H, T // 64, 64).amax(-1)
for h in range(B * H):
    print("head", h, " ".join(f"{x:.3f}" for x in e[h].tolist()), flush=True)
