"""GPU sweep for the cluster softmax (kernels_ref/ch03_online_softmax/softmax_cluster.cu): configurations (blocks a
row, threads a block, 16-byte vectors a thread) against the fast path as it stands
(softmax_split_rows.online_softmax_triton, "fast-default": the cluster kernel itself past CLUSTER_ABOVE columns on
Hopper), CONFIGS' Triton kernel ("triton-configs"), torch.softmax and, where it is installed, Liger-Kernel's
softmax, in one process, on the report's long-row softmax shapes and 1024 x 262144 bfloat16.

    python benchmarks/softmax_cluster_sweep.py OUT.json

Measures the copy (course.timing.copy_gbps(1 << 30)); each output is checked against torch.softmax in float32
before it is timed (a wrong one gets an error record and no time); each impl runs untimed for 0.2 s first. pct = %
of that copy (bytes: x read once, y written once). A hang (a cluster barrier never met) is caught by sweeplib's
watchdog: error record, JSON written, exit code 3.

    {"gpu", "sms", "copy_gbps", "records": [{"op", "shape", "dtype", "impl", "config", "ms", "gbps", "pct", "err"}
     or {..., "error"}], "best": {"softmax RxC dtype": record with "baselines"}}
"""
import sys

import sweeplib
import torch
from softmax_long_rows_sweep import _softmax_check

from course import timing
from kernels_ref.ch03_online_softmax import softmax_cluster as sc
from kernels_ref.ch03_online_softmax import softmax_split_rows as fast

BUDGET_S = 150
WATCHDOG_S = 45


def K(cluster, threads, vec):
    return {"cluster": cluster, "threads": threads, "vec": vec}


F32, BF16 = torch.float32, torch.bfloat16
# H100, archived run gpu_2026-11-27_s11/a: 128-thread blocks won every long row (fp32 1024x131072:
# 8x128x32 96.6%, 8x256x16 92.1, 8x512x8 94.1; bf16 2048x131072: 8x128x16 92.4, 8x256x8 85.7; bf16 1024x262144:
# 8x512x8 83.7, 8x256x16 81.9); at 32768 columns and below the fast path stayed ahead (97.6 / 99.3 / 96.0% against
# the best cluster config's 91.9 / 96.2 / 91.1). So: small blocks holding more, and the fast path from 32768 down.
# H200, gpu_2026-11-27_s11/d and e: the same choices reached only 82.6-82.8 / 78.2-78.6 / 68.9-69.1% there.
# Persistent clusters (each looping over rows; commit d21b237) lost everywhere in gpu_2026-11-27_s11/e (float32
# 62.6-73.2, bfloat16 19.7-45.7%), so relaunching a cluster per row is not what costs. Tried next: one exponential an
# element (X(): float32, one_exp) and clusters of 16 blocks (non-portable: smaller parts, fewer registers, more
# blocks an SM).
def X(cluster, threads, vec):
    return dict(K(cluster, threads, vec), one_exp=True)


# H100, gpu_2026-11-27_s11/f: one_exp 97.0 against 96.6%; clusters of 16 lost (88.2-92.2 float32, 74.5-89.6
# bfloat16).
# Added for the H200: the cache hints (ld 1: read-only path without L1 allocation, 2: none; st 1: none).
def H(base, ld, st):
    return dict(base, ld=ld, st=st)


# And timing probes (impl "probe": wrong outputs by design, timed unchecked; softmax_cluster.cu's SC_PROBE): the
# kernel without the exchange (1), without the arithmetic (2: a copy staged through registers), without both (3).
# If 3 is as slow as the kernel, the staging itself (a block's part loaded whole, then stored) is what costs.
def PR(base, probe):
    return dict(base, probe=probe)


# H100, gpu_2026-11-27_s11/k: the hints decided it. Plain loads and stores (ld 2, st 1) read 99.7% (float32) and
# 96.8% (bfloat16) against 97.0 and 92.3 with the streaming hints (ld 0, st 0, then the default); the probes without
# exchange, arithmetic or both, all with the hints, read 96.7-97.6. The default is now no hint (softmax_cluster.LD, ST);
# K() and X() candidates take it, H() names the hints.
# For the H200, where the probes put the cost in the arithmetic (gpu_2026-11-27_s11/n: the kernel 91.5 / 86.5% of
# copy, the same kernel without arithmetic 96.1 / 97.4): F() is softmax_cluster.cu's SC_FAST (the exponent
# by one FMA, ex2.approx.ftz, bfloat16 maxima on pairs, 1 / D folded into the exponent); bfloat16 with one_exp keeps
# t = 2^(x - m_r) as float32 (so 8 vectors a thread, 256 threads, for 131072 columns); "min_blocks" is
# __launch_bounds__' second argument (128 registers at 16 vectors with SC_FAST, 96 with 5 blocks an SM).
def F(base, **kw):
    return dict(base, fast=True, **kw)


# (The earlier candidate lists are in git history, commit 9cecd1d.)
# H100, archived run gpu_2026-11-27_s12/b: bfloat16 131072 98.8% with SC_FAST, 99.2 with 5 blocks an SM, against 97.0
# without; 262144 94.5 against 88.7; float32 100.0 against 99.7; bfloat16 with one_exp 86.8-87.2 (8 vectors a thread do
# not hide the latency): dropped. float32 SC_FAST now keeps the exact difference (x - m) (its FMA form failed a 2e-6
# test there).
SHAPES = [  # the shipped configs first
    ((1024, 131072, F32), [X(8, 128, 32), F(X(8, 128, 32)), PR(X(8, 128, 32), 3)]),
    ((2048, 131072, BF16), [K(8, 128, 16), F(K(8, 128, 16)), F(K(8, 128, 16), min_blocks=5),
                            F(K(8, 128, 16), min_blocks=4), PR(K(8, 128, 16), 3)]),
    ((1024, 262144, BF16), [K(8, 512, 8), F(K(8, 512, 8)), F(K(8, 256, 16))]),
]
ROUNDS = 2  # every impl of a shape timed once a round, the rounds interleaved (records carry "round")


def _unchecked(fn):
    def check():  # a probe's output is wrong by design: run it once, check nothing
        fn()
        torch.cuda.synchronize()
        return None
    return check


def _liger():
    try:
        from liger_kernel.ops.softmax import LigerSoftmaxFunction
    except Exception:  # noqa: BLE001  (not installed: no Liger records)
        return None
    return LigerSoftmaxFunction.apply


class Sweep(sweeplib.Sweep):
    def time_one(self, base, fn, check, nbytes):
        def run():
            err = check()
            from kernels_ref.report import warm
            warm({"fn": fn}, 0.2, torch.cuda.synchronize)
            return timing.bench(fn), err
        self.measure(dict(base), run, nbytes)

    def finish(self):
        self.doc["best"] = sweeplib.best_with_baselines(
            self.doc["records"], lambda r: f"{r['op']} {r['shape'][0]}x{r['shape'][1]} {r['dtype']}", "candidate")
        self.write()


def main(argv):
    if not sweeplib.gpu_args(argv, __doc__):
        return 2
    props = torch.cuda.get_device_properties(0)
    sw = Sweep(argv[1], {"gpu": torch.cuda.get_device_name(), "sms": props.multi_processor_count,
                         "copy_gbps": timing.copy_gbps(1 << 30), "records": [], "best": {}},
               budget_s=BUDGET_S, watchdog_s=WATCHDOG_S)
    print(f"{sw.doc['gpu']}: copy {sw.doc['copy_gbps']:.0f} GB/s", flush=True)
    liger = _liger()
    for (rows, cols, dtype), cands in SHAPES:
        gen = torch.Generator(device="cuda").manual_seed(0)
        x = torch.randn(rows, cols, device="cuda", generator=gen).mul_(3).to(dtype)
        y = torch.empty_like(x)
        want = torch.softmax(x.float(), dim=-1)
        nbytes = 2 * x.numel() * x.element_size()
        ident = {"op": "softmax", "shape": [rows, cols], "dtype": str(dtype).replace("torch.", "")}
        impls = [(dict(ident, impl="probe" if cfg.get("probe") else "candidate", config=cfg),
                  lambda cfg=cfg: sc.softmax_cluster(x, y, cfg)) for cfg in cands]
        impls.append((dict(ident, impl="fast-default", config=fast.config_for(x)),
                      lambda: fast.online_softmax_triton(x, y)))
        impls.append((dict(ident, impl="triton-configs", config=fast.config_for(x)),  # the fast path off Hopper
                      lambda: fast.run_config(x, y, fast.config_for(x))))
        impls.append((dict(ident, impl="torch"), lambda: torch.softmax(x, dim=-1)))
        if liger is not None:
            impls.append((dict(ident, impl="liger"), lambda: liger(x)))
        for rnd in range(ROUNDS):
            for rec, fn in impls:
                check = _unchecked(fn) if rec["impl"] == "probe" else _softmax_check(fn, y, want, dtype)
                sw.time_one(dict(rec, round=rnd), fn, check, nbytes)
        x = y = want = None
        torch.cuda.empty_cache()
    sweeplib.close(sw, "best candidate per shape (baselines: % of copy):",
                   lambda r: f"{r['pct']:.1f}% {r['config']}; {r['baselines']}", argv[1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
