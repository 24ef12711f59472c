"""Sweep of the Hopper FlashAttention candidate (kernels_ref/ch04_flash_attention/flash_attention_hopper.py)
against the teaching reference and SDPA's flash and cuDNN backends, on the report's shapes.

    python benchmarks/attention_hopper_sweep.py OUT.json [--budget 215] [--shapes all|key]

One process, bf16, B=4, H=32 (kernels_ref/report.py's attention cases), TFLOP/s = 4·B·H·T²·D / t, half of
that when causal, t from course.timing.bench (L2 flushed, median). Shapes run most informative first
(D128 T4096 non-causal and causal, then D64 T4096, then the other T); per shape: SDPA cuDNN, SDPA flash,
the teaching reference, then the candidate's configs: all of SWEEP_CONFIGS (best guesses first) at T = 4096,
the TOP fastest of those at the other T. Every output is first checked
against SDPA (flash backend, else math) on the same inputs: a wrong output gives an error record and is
not timed. Each config runs under a watchdog thread: a compile error or an exception gives an error
record; a hang past --per-config seconds gives an error record, and the sweep stops (a hung GPU kernel
cannot be cancelled from Python) after writing the JSON. The JSON is rewritten after every record; a
time budget (--budget, default 215 s, counted after the imports) ends the sweep early with what it has.

Reading it: each printed line is one record; at the end, per shape, the best candidate config, its
TFLOP/s, cuDNN's, and BEATS/behind. The JSON has "records" (one per shape x variant: tflops or error)
and "best" (per shape).
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time


import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import course  # noqa: E402,F401  (GPU mode on a GPU machine)
from course import timing  # noqa: E402
from kernels_ref.ch04_flash_attention import flash_attention_hopper as fh  # noqa: E402
from kernels_ref.ch04_flash_attention import flash_attention_triton as fa  # noqa: E402

C = fh.Config
# Best guesses first: the shape loop may run out of budget before the list does.
# No ws=True here: triton 3.6.0 compiles warp_specialize=True on sm_90 to the same PTX as without (no
# setmaxnreg, no ttg.warp_specialize; checked offline with triton 3.6.0's compiler and ptxas): it would only
# repeat a config. tma=0 is the control: the same tiles with pointer loads.
SWEEP_CONFIGS = {
    128: [C(128, 64, 8, 3), C(128, 128, 8, 3), C(128, 64, 8, 3, pipe=True), C(128, 64, 8, 4), C(128, 128, 8, 2),
          C(128, 64, 8, 3, tma=0), C(128, 64, 4, 3)],
    64: [C(128, 64, 4, 3), C(128, 128, 8, 3), C(128, 64, 8, 3), C(128, 64, 8, 3, pipe=True),
         C(128, 64, 4, 3, pipe=True), C(128, 128, 4, 3), C(128, 64, 4, 4), C(128, 64, 4, 3, tma=0)],
}
KEY_SHAPES = [(128, 4096, False), (128, 4096, True), (64, 4096, False), (64, 4096, True)]
OTHER_SHAPES = [(D, T, causal) for D in (128, 64) for causal in (False, True) for T in (1024, 2048, 8192, 16384)]
B, H = 4, 32
KEY_T = 4096  # all configs run at this T; the other T get the TOP fastest there
DEVICE = "cuda"  # tests/test_attention_hopper.py runs the sweep's logic on the CPU with these patched
TOP = 3  # configs carried from T = 4096 to the other T


def tflops(T, D, causal, ms):
    return 4 * B * H * T * T * D * (0.5 if causal else 1.0) / (ms * 1e-3) / 1e12


def synchronize():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def device_name():
    return torch.cuda.get_device_name() if DEVICE == "cuda" else DEVICE


def sdpa(backend, q, k, v, causal):
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def configs_for(records, D, causal, T):
    """All of SWEEP_CONFIGS[D] at T = 4096 (the key shapes); at the other T only the TOP configs that
    were fastest at T = 4096 for this D and mask (all of them if T = 4096 has no result yet)."""
    if T == KEY_T:
        return SWEEP_CONFIGS[D]
    done = sorted((r for r in records if (r["D"], r["T"], r["causal"]) == (D, KEY_T, causal)
                   and r["config"] and r.get("tflops")), key=lambda r: -r["tflops"])
    if not done:
        return SWEEP_CONFIGS[D][:TOP]
    return [C(**r["config"]) for r in done[:TOP]]


class Hung(Exception):
    pass


def watched(fn, seconds):
    """fn() in a daemon thread; its result, its exception re-raised, or Hung after `seconds`."""
    box = {}
    dev = torch.cuda.current_device() if torch.cuda.is_available() else None  # the caller's: per thread in CUDA

    def target():
        try:
            # A new thread has no current CUDA context until torch makes one current; Triton's host
            # TensorDescriptor (tma=1) calls the driver directly, and without this failed (H100, 2026-11-26) with
            # "Failed to create tensor map descriptor: invalid device context".
            if dev is not None:
                torch.cuda.set_device(dev)
                torch.cuda.synchronize()  # a runtime call that needs the context binds the primary one here
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001
            box["error"] = e
    th = threading.Thread(target=target, daemon=True)
    th.start()
    th.join(seconds)
    if th.is_alive():
        raise Hung(f"no result after {seconds} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    out = args[0]
    budget = float(args[args.index("--budget") + 1]) if "--budget" in args else 215.0
    per_config = float(args[args.index("--per-config") + 1]) if "--per-config" in args else 60.0
    which = args[args.index("--shapes") + 1] if "--shapes" in args else "all"
    shapes = KEY_SHAPES + (OTHER_SHAPES if which == "all" else [])
    t_start = time.time()
    dev = device_name()
    doc = {"device": dev, "torch": torch.__version__, "triton": fh.triton.__version__, "dtype": "bfloat16",
           "B": B, "H": H, "records": [], "best": [], "complete": False}

    def save():
        with open(out, "w") as f:
            json.dump(doc, f, indent=1)

    def record(rec):
        doc["records"].append(rec)
        ok = "tflops" in rec
        what = f"{rec['tflops']:.0f} TFLOP/s" if ok else f"ERROR {rec.get('error')}"
        extra = f" (max err {rec['max_err']:.3g}, first call {rec['first_call_s']} s)" if ok else ""
        print(f"{dev} | D={rec['D']} T={rec['T']} causal={rec['causal']} {rec['variant']}: {what}{extra}"
              f" [{time.time() - t_start:.0f} s]", flush=True)
        save()

    hung = False
    for D, T, causal in shapes:
        if hung or time.time() - t_start > budget:
            break
        g = torch.Generator(device=DEVICE).manual_seed(0)
        q, k, v = (torch.randn(B, H, T, D, device=DEVICE, dtype=torch.bfloat16, generator=g) for _ in range(3))
        o = torch.empty_like(q)
        try:
            ref = sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal)
        except RuntimeError:
            ref = sdpa(SDPBackend.MATH, q, k, v, causal)
        # Tolerance: a few bf16 roundings of the largest output (the kernels differ from SDPA in the
        # rounding of P to bf16 and in summation order; a wrong mask or rescale is off by O(max|o|)).
        tol = 8 * 2.0 ** -8 * ref.abs().max().item()
        base = {"D": D, "T": T, "causal": causal, "B": B, "H": H}
        variants = [("sdpa cudnn", None, lambda: sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal)),
                    ("sdpa flash", None, lambda: sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal)),
                    ("triton reference", None, lambda: fa.flash_attention(q, k, v, o, causal))]
        variants += [(cfg.name(), cfg, lambda cfg=cfg: fh.flash_attention(q, k, v, o, causal, cfg))
                     for cfg in configs_for(doc["records"], D, causal, T)]
        for name, cfg, call in variants:
            if time.time() - t_start > budget:
                break
            rec = dict(base, variant=name, config=cfg._asdict() if cfg else None)
            try:
                def check(call=call):
                    o.zero_()
                    got = call()
                    got = o if got is None else got
                    synchronize()
                    return (got.float() - ref.float()).abs().max().item()
                t0 = time.time()
                err = watched(check, per_config)
                rec["first_call_s"] = round(time.time() - t0, 2)  # compile included
                rec["max_err"] = err
                if not err <= tol:  # NaN fails too
                    rec["error"] = f"wrong output: max err {err:.3g} > {tol:.3g}"
                else:
                    rec["tflops"] = tflops(T, D, causal, watched(lambda call=call: timing.bench(call), per_config))
            except Hung as e:
                rec["error"] = f"hung: {e}"
                hung = True
            except Exception as e:  # noqa: BLE001
                rec["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            record(rec)
            if hung:
                break
        q = k = v = o = ref = None  # free this shape's 2.5 GB before the next
        if DEVICE == "cuda":
            torch.cuda.empty_cache()

    print(f"\n{dev}: best candidate config per shape (TFLOP/s; cuDNN; teaching reference)", flush=True)
    for D, T, causal in shapes:
        recs = [r for r in doc["records"] if (r["D"], r["T"], r["causal"]) == (D, T, causal)]
        if not recs:
            continue
        tf = {r["variant"]: r.get("tflops") for r in recs}
        cands = [r for r in recs if r["config"] and r.get("tflops")]
        best = max(cands, key=lambda r: r["tflops"]) if cands else None
        cudnn = tf.get("sdpa cudnn")
        row = {"D": D, "T": T, "causal": causal, "best": best and best["variant"],
               "tflops": best and best["tflops"], "sdpa cudnn": cudnn, "sdpa flash": tf.get("sdpa flash"),
               "triton reference": tf.get("triton reference"),
               "beats_cudnn": bool(best and cudnn and best["tflops"] >= cudnn)}
        doc["best"].append(row)
        verdict = "BEATS cuDNN" if row["beats_cudnn"] else "behind cuDNN"
        fmt = lambda x: f"{x:.0f}" if x else "-"  # noqa: E731
        print(f"D={D} T={T} causal={causal}: {row['best']} {fmt(row['tflops'])} | cuDNN {fmt(cudnn)} | "
              f"reference {fmt(row['triton reference'])} -> {verdict}", flush=True)
    doc["complete"] = not hung and len(doc["best"]) == len(shapes)
    doc["elapsed_s"] = round(time.time() - t_start, 1)
    save()
    print(f"elapsed {doc['elapsed_s']} s, complete={doc['complete']}, written {out}", flush=True)
    if hung:
        os._exit(3)  # a hung kernel keeps the CUDA context busy: do not wait for it at exit


if __name__ == "__main__":
    main()
