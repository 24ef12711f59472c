"""Where the split last round's time goes (Config.split; twenty-first session, run f). D 64, B 4, H 32, no mask,
T 1024 and 2048, SEAM_64 and its split variant, each timed by course.timing.bench in 3 interleaved rounds:
  whole    SEAM_64 (the lpt table, whole query tiles)
  split    SEAM_64 with split (pieces combined by _split_output)
  nocomb   the split table, pieces without their output (the kernel's SPLIT = 2: no stores, no atomics; wrong output)
  splitfmt the split table's format (three words an entry, the kernel's split code) with the last round whole
  first    the split table with each CTA's pieces run before its whole tiles
Usage: python benchmarks/split_probe.py OUT.json (run f1 built the tables inside the timed calls: its last three
rows timed a host-to-device copy each; fixed for f2)"""
import json
import statistics
import sys

import torch

from course import timing
from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg

out = {"device": torch.cuda.get_device_name(), "rows": []}
n_sms = torch.cuda.get_device_properties(0).multi_processor_count
real_kernel = fg._persistent_kernel
real_tensor = fg.schedule_tensor


def table_variant(kind, n_kt, n_items):
    t = fg.split_schedule(n_kt, n_items, n_sms)
    P = min(n_sms, n_items)
    N = t[P]
    offs, items, keys, words = t[:P + 1], t[P + 1:P + 1 + N], t[P + 1 + N:P + 1 + 2 * N], t[P + 1 + 2 * N:]
    ents = [[(items[e], keys[e], words[e]) for e in range(offs[p], offs[p + 1])] for p in range(P)]
    if kind == "splitfmt":  # the last round whole, round robin
        R = n_items // P
        ents = [[(i, n_kt << 16, 0) for i in range(p, R * P, P)] for p in range(P)]
        for j, i in enumerate(range(R * P, n_items)):
            ents[j % P].append((i, n_kt << 16, 0))
    if kind == "first":
        ents = [[e for e in m if e[2]] + [e for e in m if not e[2]] for m in ents]
    offs, items, keys, words = [0], [], [], []
    for m in ents:
        items += [e[0] for e in m]
        keys += [e[1] for e in m]
        words += [e[2] for e in m]
        offs.append(len(items))
    return offs + items + keys + words


TABLES: dict = {}  # (kind, T) -> the table on the GPU, made once (outside the timed calls: a host-to-device copy)


def run(kind, q, k, v, o):
    B, H, T, D = q.shape
    cfg = fg.SEAM_64 if kind == "whole" else fg.SEAM_64._replace(split=True)
    if kind in ("splitfmt", "first", "nocomb"):
        sched, n_cta, ws, cnt = real_tensor(T, B * H, cfg, False, n_sms, q.device, D)
        if (kind, T) not in TABLES:
            t = table_variant(kind, T // cfg.BLOCK_N, B * H * T // cfg.BLOCK_M)
            TABLES[(kind, T)] = torch.tensor(t, dtype=torch.int32, device=q.device)
        sched = TABLES[(kind, T)]
        fg.schedule_tensor = lambda *a, **kw: (sched, n_cta, ws, cnt)

        class K:
            def __getitem__(self, grid):
                return lambda *a, **kw: real_kernel[grid](*a, **dict(kw, SPLIT=2 if kind == "nocomb" else 1))
        fg._persistent_kernel = K()
    try:
        fg.flash_attention(q, k, v, o, False, cfg)
    finally:
        fg.schedule_tensor = real_tensor
        fg._persistent_kernel = real_kernel


kinds = ["whole", "split", "nocomb", "splitfmt", "first"]
for T in (1024, 2048):
    q, k, v = (torch.randn(4, 32, T, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    times = {kd: [] for kd in kinds}
    for kd in kinds:
        o = torch.full_like(q, float("nan"))  # (nocomb leaves the pieces' rows unwritten)
        run(kd, q, k, v, o)
        err = (o.float() - ref.float()).abs().max().item()
        print(f"T {T} {kd}: max error {err:.3g}", flush=True)
    for r in range(3):
        for kd in (kinds if r % 2 == 0 else kinds[::-1]):
            o = torch.empty_like(q)
            times[kd].append(timing.bench(lambda kd=kd, o=o: run(kd, q, k, v, o)))
    flops = 4 * 4 * 32 * T * T * 64
    for kd in kinds:
        tf = [flops / (ms * 1e-3) / 1e12 for ms in times[kd]]
        out["rows"].append({"T": T, "kind": kd, "tflops_rounds": tf})
        print(f"T {T} {kd}: {statistics.median(tf):.0f} TFLOP/s (rounds {', '.join(f'{x:.0f}' for x in tf)})",
              flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)
