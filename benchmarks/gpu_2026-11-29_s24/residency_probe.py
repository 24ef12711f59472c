"""Can a submission keep part of its inputs in L2 across the judge's rounds with the evict_last policy? (Twenty-fourth
session, run a; H200.)

The judge times a submission as R replays of a CUDA graph of one round over n input sets that together hold at least
4 x L2 (grading.measure_bandwidth), with no flush between rounds and the persisting-L2 limit at 0. Session 23 found
lines loaded with evict_last outliving a 2 x L2 memset. A kernel that loads the first P rows of each set with
evict_last (and the rest with evict_first, so that the streamed lines never displace them) could find those P rows in
L2 in the next round, which an honest kernel reading each input once never could. Here, judge-like: a Triton row copy
(y = x, float32, 8192 columns) over n sets sized as the judge sizes them, against the judge's roofline (torch copy_ of
as many bytes over as many sets), P = f * L2 / n bytes per set for f in FRACTIONS; as is (the judge today), with the
course's flush (course.timing.flush_l2) launched between rounds (for both, a candidate defence), and with 4x as many
sets (another). Fraction = copy time / kernel time, the best of 3 batches of about 0.25 s.
Run b: `--rest default` loads the other rows with the default policy instead of evict_first (lines of normal
priority, which session 23 saw evicted before evict_last ones), `--mults 4` only the judge's 4 x L2.
Usage: PYTHONPATH=$PWD python benchmarks/gpu_2026-11-29_s24/residency_probe.py OUT.json [--rest default] [--mults 4]"""
import json
import math
import sys
import time

import torch
import triton
import triton.language as tl

from autograder.execute import capture, no_persisting_l2
from course import timing

COLS = 8192
FRACTIONS = (0.0, 0.5, 0.9, 1.5)


@triton.jit
def row_copy(x_ptr, y_ptr, pin_rows, BLOCK: tl.constexpr, HINT: tl.constexpr, REST: tl.constexpr):
    row = tl.program_id(0)
    offs = row * BLOCK + tl.arange(0, BLOCK)
    if HINT:
        if row < pin_rows:
            v = tl.load(x_ptr + offs, eviction_policy="evict_last")
        else:
            v = tl.load(x_ptr + offs, eviction_policy=REST)
    else:
        v = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, v)


def batch_s(calls, rounds, between=None):
    g = capture(calls)
    for _ in range(2):
        g.replay()
        if between:
            between()
    best = float("inf")
    for _ in range(3):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(rounds):
            g.replay()
            if between:
                between()
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best


def main(out, rest="evict_first", mults=(4, 16)):
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    doc = {"gpu": torch.cuda.get_device_name(), "l2_bytes": l2, "rest": rest, "persisting_l2_off": no_persisting_l2(),
           "rows": []}
    print(doc, flush=True)
    for rows in (1024, 8192):  # 33.5 MB of input a set (like ch03's warp exercise), 268 MB (ch01)
        per_set = 2 * rows * COLS * 4
        for sets_mult in mults:
            n = min(max(2, math.ceil(sets_mult * l2 / per_set)), 64)
            xs = [torch.randn(rows, COLS, device="cuda") for _ in range(n)]
            ys = [torch.empty_like(x) for x in xs]
            srcs = [torch.empty(per_set // 2, dtype=torch.uint8, device="cuda").random_() for _ in range(n)]
            dsts = [torch.empty_like(s) for s in srcs]
            copy_calls = [(lambda s=s, d=d: d.copy_(s)) for s, d in zip(srcs, dsts)]
            est = batch_s(copy_calls, 3) / 3
            rounds = max(3, math.ceil(0.25 / est))
            for flush in (False, True):
                if flush and sets_mult != 4:
                    continue
                between = timing.flush_l2 if flush else None
                t_copy = batch_s(copy_calls, rounds, between)
                for f in FRACTIONS:
                    pin = int(f * l2 / n) // (COLS * 4)
                    calls = [(lambda x=x, y=y: row_copy[(rows,)](x, y, pin, BLOCK=COLS, HINT=f > 0,
                                                           REST="" if rest == "default" else rest, num_warps=8))
                             for x, y in zip(xs, ys)]
                    t = batch_s(calls, rounds, between)
                    assert all(torch.equal(x, y) for x, y in zip(xs, ys))
                    r = {"rows": rows, "set_mb": per_set / 2 / 1e6, "sets": n, "sets_mult": sets_mult,
                         "flush_between_rounds": flush, "f": f, "pin_rows": pin, "rounds": rounds,
                         "copy_s": t_copy, "kernel_s": t, "fraction": t_copy / t}
                    doc["rows"].append(r)
                    print(f"set {r['set_mb']:6.1f} MB x{n:2d} (>= {sets_mult} L2) flush={flush!s:5} f={f:3.1f} "
                          f"pin {pin:4d} rows: {100 * r['fraction']:6.1f}% of copy", flush=True)
            del xs, ys, srcs, dsts
            torch.cuda.empty_cache()
    json.dump(doc, open(out, "w"), indent=1)


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[a.index("--rest") + 1] if "--rest" in a else "evict_first",
         tuple(int(v) for v in a[a.index("--mults") + 1].split(",")) if "--mults" in a else (4, 16))
