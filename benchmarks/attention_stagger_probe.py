"""Does the staggered schedule (flash_attention_gluon Config.stagger, commit 329ddb8) help once L2 and the grid's
tail are taken out? Both schedules on the same number of CTAs (num_sms = the heads' count: a whole head a CTA for
the staggered one), on a batch whose K and V fit in L2 many times over (B 1, H 32), not causal, bf16. Medians of
3 interleaved rounds of course.timing.bench, TFLOP/s = 4 B H T^2 D / t.

    PYTHONPATH=$PWD python benchmarks/attention_stagger_probe.py OUT.json
"""
from __future__ import annotations

import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from course.timing import bench  # noqa: E402
from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg  # noqa: E402

B, H = 1, 32
PAIRS = {64: [(fg.WIDE_64, fg.WIDE_64._replace(stagger=True)),
              (fg.CONFIGS[64], fg.CONFIGS[64]._replace(stagger=True))],
         128: [(fg.PERSIST_128, fg.PERSIST_128._replace(stagger=True)),
               (fg.SHORT_128, fg.SHORT_128._replace(stagger=True))]}


def main(out):
    recs = []
    for D in (64, 128):
        for T in (1024, 2048, 4096):
            g = torch.Generator(device="cuda").manual_seed(0)
            q, k, v = (torch.randn(B, H, T, D, device="cuda", generator=g, dtype=torch.bfloat16) for _ in range(3))
            ref = torch.nn.functional.scaled_dot_product_attention(q, k, v)
            cfgs = [c for pair in PAIRS[D] for c in pair]
            times = {c.name(): [] for c in cfgs}
            for c in cfgs:
                o = torch.empty_like(q)
                fg.flash_attention(q, k, v, o, False, c, num_sms=B * H)
                err = (o.float() - ref.float()).abs().max().item()
                assert err < 2e-2, (c, err)
            for _ in range(3):
                for c in cfgs:
                    o = torch.empty_like(q)
                    times[c.name()].append(bench(lambda c=c, o=o: fg.flash_attention(q, k, v, o, False, c,
                                                                                     num_sms=B * H)))
            fl = 4 * B * H * T * T * D
            for c in cfgs:
                ms = statistics.median(times[c.name()])
                recs.append(dict(D=D, T=T, config=c.name(), ms_rounds=times[c.name()], ms=ms, tflops=fl / ms / 1e9))
                print(f"D={D} T={T} {c.name()}: {fl / ms / 1e9:.0f} TFLOP/s on {B * H} SMs", flush=True)
            json.dump(dict(gpu=torch.cuda.get_device_name(), B=B, H=H, num_sms=B * H, records=recs),
                      open(out, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
