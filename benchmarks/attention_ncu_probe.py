"""What cuDNN's SDPA kernel is where it leads (grid, block, registers, shared memory) and where the time goes in
both kernels (tensor-pipe use, warp stalls): run under Nsight Compute, which profiles only the launches between
cudaProfilerStart and Stop (one cuDNN SDPA call and one flash_attention_gluon call per shape, after warm-up).

    ncu --profile-from-start off --clock-control none --section LaunchStats --section SpeedOfLight \
        --section WarpStateStats PYTHONPATH=$PWD python benchmarks/attention_ncu_probe.py [D:T:causal,...]
"""
from __future__ import annotations

import sys


import torch  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402
from torch.nn.functional import scaled_dot_product_attention as sdpa  # noqa: E402

from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg  # noqa: E402

SHAPES = [(64, 1024, False), (64, 1024, True), (128, 1024, False), (64, 4096, True)]
if len(sys.argv) > 1:  # e.g. 64:1024:1,128:1024:0 (D:T:causal)
    SHAPES = [(int(d), int(t), bool(int(c))) for d, t, c in (s.split(":") for s in sys.argv[1].split(","))]

for D, T, causal in SHAPES:
    q, k, v = (torch.randn(4, 32, T, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.empty_like(q)
    for _ in range(3):
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            sdpa(q, k, v, is_causal=causal)
        fg.flash_attention(q, k, v, o, causal)
    torch.cuda.synchronize()
    print(f"shape D={D} T={T} causal={causal}: cuDNN, then {fg.choose(D, T, causal).name()}", flush=True)
    torch.cuda.profiler.start()
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        sdpa(q, k, v, is_causal=causal)
    fg.flash_attention(q, k, v, o, causal)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
