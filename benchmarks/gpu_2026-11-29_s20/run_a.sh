#!/bin/bash
# Twentieth session, run a (H200): the seams between a persistent CTA's work items (Config.q_bufs: a second query
# buffer; Config.overlap: the next item's first Q Kᵀ behind the last P V, during the output's store). A smoke run of
# one overlap config (on 1 and 3 SMs, killed after 90 s if it hangs), then OVERLAP_SWEEP against choose() and cuDNN
# (D 64 T 1024-4096 both maskings, D 128 T 1024, causal T 1024-2048; medians of 3 interleaved rounds), then the GPU
# tests of the new configs (tests/test_attention_fast.py -k seam).
O=$OUT
{ nvidia-smi --query-gpu=name --format=csv,noheader; echo "head $HEAD"; } > $O/info.txt; cat $O/info.txt
grep -q H200 $O/info.txt || { echo "not an H200"; exit 3; }
export PYTHONPATH=$PWD FLASHCOURSE_MODE=gpu PYTHONUNBUFFERED=1
timeout 90 python3 - > $O/smoke.txt 2>&1 <<'PY'
import torch
from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg
for cfg in (fg.BALANCED_64._replace(q_bufs=2, overlap=True), fg.BALANCED_64._replace(q_bufs=2)):
    for causal in (False, True):
        for sms in (1, 3, None):
            q, k, v = (torch.randn(1, 2, 1024, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            o = torch.empty_like(q)
            fg.flash_attention(q, k, v, o, causal, cfg, num_sms=sms)
            ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
            torch.cuda.synchronize()
            print(cfg.name(), causal, sms, "max err", (o.float() - ref).abs().max().item(), flush=True)
PY
echo "smoke rc=$?"; cat $O/smoke.txt | tail -14
S=64:1024:0,64:2048:0,64:4096:0,64:1024:1,64:2048:1,64:4096:1,128:1024:0,128:1024:1,128:2048:1
timeout 290 python3 benchmarks/attention_gluon_check.py $O/a1.json --psmem --sweep OVERLAP_SWEEP --shapes $S \
  --budget 270 --per-call 60 > $O/a1.log 2>&1; echo "exit $?"
grep "median of rounds" $O/a1.log; grep ERROR $O/a1.log | head -5
timeout 170 python3 -m pytest -q -ra -p no:cacheprovider tests/test_attention_fast.py -k "seam" \
  > $O/pytest.txt 2>&1; echo "pytest rc=$?"; tail -n 12 $O/pytest.txt
