"""Check and time the Gluon FA3-style candidate (kernels_ref/ch04_flash_attention/flash_attention_gluon.py) against
the Triton Hopper candidate (flash_attention_hopper.py, its CONFIGS default) and SDPA's cuDNN backend, on a GPU.

    PYTHONPATH=$PWD python benchmarks/attention_gluon_check.py OUT.json [--quick] [--budget 230] [--per-call 60]
        [--T 1024,2048] [--configs persistent,BM192,-p,gluon-BM128-BN128-s3-c2] [--rounds 3]
    PYTHONPATH=$PWD python benchmarks/attention_gluon_check.py OUT.json --pingpong [--budget 120] [--rounds 3]
    PYTHONPATH=$PWD python benchmarks/attention_gluon_check.py OUT.json --psmem [--shapes 64:1024:0,128:2048:1]
        [--sweep SHORT_SWEEP] [--budget 230] [--rounds 3]

One process, bf16, B=4, H=32, T in 1024..16384 (--quick: 4096 only; --T: those lengths), D 128 and 64, causal
False/True; T = 4096 first. For each shape: SDPA cuDNN, the Hopper candidate, then every config of
flash_attention_gluon.SWEEP[D] (--configs: only those whose name contains one of the comma-separated strings, or
that are persistent for the word "persistent"; the default configs always run, as the baseline).
Each Gluon config is first checked against an fp32 reference on a small batch (B=1, H=2, same T up to 2048) and
then on the timed shape against SDPA (flash backend, else math); a wrong output, a compile error or any exception
gives an error record (with the exception text) and no timing. Times: course.timing.bench (L2 flushed, median),
the same function benchmarks/attention_hopper_sweep.py uses; TFLOP/s = 4·B·H·T²·D / t, half for causal.

--pingpong: T in 1024, 2048, 4096 (or --T), D 128 and 64, causal or not; per shape SDPA cuDNN, choose()'s config
("choose"), the same with Config.pingpong, and for D 128 BM128-BN128 with 2 and with 3 stages (FA3 ping-pong; the
third stage), no Hopper candidate; --budget 120 and --rounds 3 unless given. Before the timed shapes a child process
(--preflight) runs every ping-pong config on small inputs (persistent ones also on 3 SMs, so that each CTA runs
many work items) against fp32 with a timeout: if it hangs, fails or times out it is killed, the ping-pong variants
are dropped with an error record, and the rest is still timed (the turn barriers are the one new way to deadlock).
--psmem: per shape (--shapes D:T:causal,..., default every shape) SDPA cuDNN, choose()'s config ("choose") and
each config of flash_attention_gluon.PSMEM_SWEEP[D] (--sweep NAME: of another dict of that module, SHORT_SWEEP;
--configs: those whose name contains one of the strings; P through shared memory, three consumer warpgroups),
each checked first on small inputs (persistent ones also on 3 SMs); no Hopper candidate; --rounds 3 unless given.
--rounds N: each config that passed is timed N times, rounds interleaved over the shape's variants; the record
keeps every round (ms_rounds) and their median (ms, tflops).

One printed line per record; the JSON ("records", then "summary": per shape the best Gluon config and its ratio
to cuDNN and to the Hopper candidate) is rewritten after every record. A watchdog thread: a call that makes no
progress for --per-call seconds gives a "hung" record, the JSON is written, and the process exits with code 3
(a hung GPU kernel cannot be cancelled from Python). Past --budget seconds the remaining records are skipped.
Importable without a GPU (nothing touches CUDA at import).
"""
from __future__ import annotations

import json
import math
import os
import statistics
import sys
import time


import torch  # noqa: E402

from benchmarks.attention_hopper_sweep import Hung, sdpa, watched  # noqa: E402
from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg  # noqa: E402
from kernels_ref.ch04_flash_attention import flash_attention_hopper as fh  # noqa: E402

B, H = 4, 32
T_ALL = [4096, 1024, 2048, 8192, 16384]
T_QUICK = [4096]
SMALL = (1, 2)  # batch and heads of the fp32-reference check
DTYPE = torch.bfloat16


def shapes(quick: bool, ts=None):
    ts = ts or (T_QUICK if quick else T_ALL)
    return [(D, T, causal) for T in ts for D in (128, 64) for causal in (False, True)]


def tflops(T, D, causal, ms):
    return 4 * B * H * T * T * D * (0.5 if causal else 1.0) / (ms * 1e-3) / 1e12


def reference_fp32(q, k, v, causal):
    """Attention in fp32 (per head, so T = 2048 stays small)."""
    q, k, v = (t.float() for t in (q, k, v))
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        T = s.shape[-1]
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ v


def tolerance(ref):
    """A few bf16 roundings of the largest output, as in tests/test_attention_hopper.py."""
    return 8 * 2.0 ** -8 * max(1.0, ref.abs().max().item())


def check_small(cfg, D, T, causal, num_sms=None):
    """Max error of the config against fp32 on B=1, H=2 (T capped at 2048); raises AssertionError if wrong.
    num_sms: the persistent grid's size (few SMs: many work items per CTA)."""
    Ts = min(T, 2048)
    g = torch.Generator(device="cuda").manual_seed(1)
    q, k, v = (torch.randn(*SMALL, Ts, D, device="cuda", generator=g).to(DTYPE) for _ in range(3))
    o = torch.full_like(q, float("nan"))  # a row the kernel forgets stays NaN
    fg.flash_attention(q, k, v, o, causal, cfg, num_sms=num_sms)
    torch.cuda.synchronize()
    ref = reference_fp32(q, k, v, causal)
    err = (o.float() - ref).abs().max().item()
    if not err <= tolerance(ref):  # NaN fails too
        raise AssertionError(f"wrong output vs fp32 at B=1 H=2 T={Ts}: max err {err:.3g} > {tolerance(ref):.3g}")
    return err


T_PINGPONG = [1024, 2048, 4096]


def pingpong_variants(D, T, causal):
    """--pingpong: [(label, config)]: choose()'s config, the same with ping-pong, and for D 128 the two- and
    three-stage BM128-BN128 tiles (a config already listed is not repeated)."""
    chosen = fg.choose(D, T, causal)
    out = [("choose " + chosen.name(), chosen), ("choose+pingpong " + chosen.name(), chosen._replace(pingpong=True))]
    if D == 128:
        for cfg in (fg.Config(128, 128, 2, 2), fg.Config(128, 128, 3, 2)):
            if cfg != chosen:
                out.append((cfg.name(), cfg))
    return out


def psmem_variants(D, T, causal, wanted=None, sweep_name="PSMEM_SWEEP"):
    """--psmem: [(label, config)]: choose()'s config, then flash_attention_gluon.PSMEM_SWEEP[D] (--sweep: another
    dict of the module, e.g. SHORT_SWEEP) (those that fit T: a multiple of BLOCK_M / num_consumers and of BLOCK_N;
    --configs: those whose name contains one of the strings), choose()'s not repeated."""
    chosen = fg.choose(D, T, causal)
    out = [("choose " + chosen.name(), chosen)]
    for cfg in getattr(fg, sweep_name)[D]:
        if wanted and not any(w in cfg.name() for w in wanted):
            continue
        if cfg != chosen and T % (cfg.BLOCK_M // cfg.num_consumers) == 0 and T % cfg.BLOCK_N == 0:
            out.append((cfg.name(), cfg))
    return out


def preflight_configs(ts):
    """The ping-pong configs --pingpong will run: {(D, causal): [configs]}."""
    out = {}
    for D, T, causal in shapes(False, ts):
        for _, cfg in pingpong_variants(D, T, causal):
            if cfg.pingpong and cfg not in out.setdefault((D, causal), []):
                out[(D, causal)].append(cfg)
    return out


def preflight(ts, per_call):
    """Child process (--preflight): each ping-pong config on small inputs against fp32, T 1024 and 2048 (and on 3
    SMs when persistent). Prints one line per check; exit code 0 if all passed, 1 if one failed, 3 if one hung."""
    bad = 0
    for (D, causal), cfgs in preflight_configs(ts).items():
        for cfg in cfgs:
            for T in (1024, 2048):
                for num_sms in ((None, 3) if cfg.persistent else (None, )):
                    what = f"preflight D={D} T={T} causal={causal} {cfg.name()} num_sms={num_sms}"
                    try:
                        err = watched(lambda: check_small(cfg, D, T, causal, num_sms), per_call)
                        print(f"{what}: ok, max err {err:.3g}", flush=True)
                    except Hung as e:
                        print(f"{what}: HUNG {e}", flush=True)
                        os._exit(3)
                    except Exception as e:  # noqa: BLE001
                        print(f"{what}: FAILED {type(e).__name__}: {str(e)[-300:]}", flush=True)
                        bad = 1
    sys.stdout.flush()
    os._exit(bad)


def run_preflight(ts, per_call, timeout):
    """preflight() in a child process, killed after `timeout` s; (ok, its output)."""
    import subprocess
    cmd = [sys.executable, os.path.abspath(__file__), "-", "--preflight", "--per-call", str(per_call)]
    if ts:
        cmd += ["--T", ",".join(map(str, ts))]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:  # subprocess.run kills the child
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return False, out + f"\ntimed out after {timeout} s (killed)"
    return run.returncode == 0, run.stdout + (f"\nexit code {run.returncode}\n" + run.stderr[-2000:]
                                              if run.returncode else "")


def sweep(D, wanted=None):
    """SWEEP[D], or (--configs) the default config and those matching one of `wanted`."""
    if not wanted:
        return fg.SWEEP[D]
    return [c for c in fg.SWEEP[D] if c == fg.CONFIGS[D] or any(
        w in c.name() or (w == "persistent" and c.persistent) for w in wanted)]


def main(argv=None):
    from course import timing

    args = sys.argv[1:] if argv is None else argv
    if not args or args[0].startswith("-") and args[0] != "-":
        sys.exit(__doc__)
    out = args[0]
    quick = "--quick" in args
    pingpong = "--pingpong" in args
    psmem = "--psmem" in args
    only = ({(int(d), int(t), bool(int(c))) for d, t, c in (x.split(":") for x in args[args.index("--shapes") + 1]
                                                           .split(","))} if "--shapes" in args else None)
    budget = float(args[args.index("--budget") + 1]) if "--budget" in args else (120.0 if pingpong else 230.0)
    per_call = float(args[args.index("--per-call") + 1]) if "--per-call" in args else 60.0
    ts = [int(t) for t in args[args.index("--T") + 1].split(",")] if "--T" in args else None
    wanted = args[args.index("--configs") + 1].split(",") if "--configs" in args else None
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else (3 if pingpong or psmem else 1)
    sweep_name = args[args.index("--sweep") + 1] if "--sweep" in args else "PSMEM_SWEEP"
    if "--sweep" in args and not psmem:
        sys.exit("--sweep names the candidates of --psmem: give --psmem too")
    if "--preflight" in args:
        preflight(ts or T_PINGPONG, per_call)
    if pingpong:
        ts = ts or T_PINGPONG
    t_start = time.time()
    dev = torch.cuda.get_device_name()
    import triton
    doc = {"device": dev, "torch": torch.__version__, "triton": triton.__version__, "dtype": "bfloat16",
           "B": B, "H": H, "quick": quick, "configs": {D: [c.name() for c in sweep(D, wanted)] for D in fg.SWEEP},
           "default": {D: fg.CONFIGS[D].name() for D in fg.CONFIGS}, "records": [], "summary": [],
           "complete": False, "pingpong": pingpong, "rounds": rounds}

    def save():
        with open(out, "w") as f:
            json.dump(doc, f, indent=1)

    def record(rec):
        doc["records"].append(rec)
        if "tflops" in rec:
            what = f"{rec['tflops']:.0f} TFLOP/s (max err {rec.get('max_err', 0):.3g}"
            what += f", small {rec['small_err']:.3g}" if "small_err" in rec else ""
            what += f", first call {rec['first_call_s']} s)"
        else:
            what = f"ERROR {rec.get('error')}"
        print(f"{dev} | D={rec['D']} T={rec['T']} causal={rec['causal']} {rec['variant']}: {what}"
              f" [{time.time() - t_start:.0f} s]", flush=True)
        save()

    hung = False
    all_shapes = [s for s in shapes(quick, ts or (sorted({t for _, t, _ in only}) if only else None))
                  if only is None or s in only]
    if psmem:
        doc["configs"] = {f"{D},{T},{int(c)}": [n for n, _ in psmem_variants(D, T, c, wanted, sweep_name)]
                          for D, T, c in all_shapes}
        doc["sweep"] = sweep_name
    pp_ok = True
    if pingpong:
        doc["configs"] = {f"{D},{T},{int(c)}": [n for n, _ in pingpong_variants(D, T, c)] for D, T, c in all_shapes}
        pp_ok, log = run_preflight(ts, min(per_call, 30.0), timeout=max(30.0, budget / 2))
        doc["preflight"] = {"ok": pp_ok, "log": log[-4000:], "s": round(time.time() - t_start, 1)}
        print(log.rstrip() + f"\npreflight ok={pp_ok} [{time.time() - t_start:.0f} s]", flush=True)
        save()
    for D, T, causal in all_shapes:
        if hung:
            break
        base = {"D": D, "T": T, "causal": causal}
        if time.time() - t_start > budget:
            record(dict(base, variant="all", error=f"skipped: past the {budget:.0f} s budget"))
            continue
        g = torch.Generator(device="cuda").manual_seed(0)
        q, k, v = (torch.randn(B, H, T, D, device="cuda", dtype=DTYPE, generator=g) for _ in range(3))
        o = torch.empty_like(q)
        try:
            ref = sdpa(torch.nn.attention.SDPBackend.FLASH_ATTENTION, q, k, v, causal)
        except RuntimeError:
            ref = sdpa(torch.nn.attention.SDPBackend.MATH, q, k, v, causal)
        tol = tolerance(ref)
        variants = [("sdpa cudnn", None, lambda: sdpa(torch.nn.attention.SDPBackend.CUDNN_ATTENTION, q, k, v, causal))]
        if pingpong:
            gluon = pingpong_variants(D, T, causal)
        elif psmem:
            gluon = psmem_variants(D, T, causal, wanted, sweep_name)
        else:
            variants.append(("triton hopper " + fh.resolve_config(D).name(), None,
                             lambda: fh.flash_attention(q, k, v, o, causal)))
            gluon = [(cfg.name(), cfg) for cfg in sweep(D, wanted)]
        variants += [(name, cfg, lambda cfg=cfg: fg.flash_attention(q, k, v, o, causal, cfg)) for name, cfg in gluon]
        timed = []  # (record, call) of the variants timed in round 0, for --rounds
        for name, cfg, call in variants:
            rec = dict(base, variant=name, config=cfg._asdict() if cfg else None)
            if time.time() - t_start > budget:
                record(dict(rec, error=f"skipped: past the {budget:.0f} s budget"))
                continue
            if cfg is not None and cfg.pingpong and not pp_ok:
                record(dict(rec, error="skipped: the ping-pong preflight failed or hung (see preflight)"))
                continue
            try:
                t0 = time.time()
                if cfg is not None:
                    rec["small_err"] = watched(lambda cfg=cfg: check_small(cfg, D, T, causal), per_call)
                    if psmem and cfg.persistent:  # many work items a CTA
                        rec["small_err_3sms"] = watched(lambda cfg=cfg: check_small(cfg, D, T, causal, 3), per_call)

                def check(call=call):
                    o.fill_(float("nan"))
                    got = call()
                    got = o if got is None else got
                    torch.cuda.synchronize()
                    return (got.float() - ref.float()).abs().max().item()
                err = watched(check, per_call)
                rec["first_call_s"] = round(time.time() - t0, 2)  # compile included
                rec["max_err"] = err
                if not err <= tol:
                    rec["error"] = f"wrong output vs SDPA: max err {err:.3g} > {tol:.3g}"
                else:
                    ms = watched(lambda call=call: timing.bench(call), per_call)
                    rec["ms"] = ms
                    rec["ms_rounds"] = [ms]
                    rec["tflops"] = tflops(T, D, causal, ms)
                    timed.append((rec, call))
            except Hung as e:
                rec["error"] = f"hung: {e}"
                hung = True
            except Exception as e:  # noqa: BLE001
                rec["error"] = f"{type(e).__name__}: {str(e)[-600:]}"
            record(rec)
            if hung:
                break
        for _ in range(1, rounds):  # the same variants again, interleaved, while the budget lasts
            if hung or time.time() - t_start > budget:
                break
            for rec, call in timed:
                try:
                    rec["ms_rounds"].append(watched(lambda call=call: timing.bench(call), per_call))
                except Hung as e:
                    rec["error_round"] = f"hung: {e}"
                    hung = True
                    break
                rec["ms"] = statistics.median(rec["ms_rounds"])
                rec["tflops"] = tflops(T, D, causal, rec["ms"])
        if rounds > 1 and timed:
            print("  median of rounds: " + "; ".join(f"{r['variant']} {r['tflops']:.0f} ({len(r['ms_rounds'])})"
                                                    for r, _ in timed), flush=True)
            save()
        q = k = v = o = ref = None
        torch.cuda.empty_cache()

    print(f"\n{dev}: best Gluon config per shape (TFLOP/s; ratio to cuDNN; to the Hopper candidate)", flush=True)
    for D, T, causal in all_shapes:
        recs = [r for r in doc["records"] if (r["D"], r["T"], r["causal"]) == (D, T, causal)]
        ok = [r for r in recs if r.get("config") and r.get("tflops")]
        cudnn = next((r.get("tflops") for r in recs if r["variant"] == "sdpa cudnn"), None)
        hopper = next((r.get("tflops") for r in recs if r["variant"].startswith("triton hopper")), None)
        best = max(ok, key=lambda r: r["tflops"]) if ok else None
        row = {"D": D, "T": T, "causal": causal, "best": best and best["variant"],
               "tflops": best and best["tflops"], "sdpa cudnn": cudnn, "triton hopper": hopper,
               "vs_cudnn": best and cudnn and best["tflops"] / cudnn,
               "vs_hopper": best and hopper and best["tflops"] / hopper,
               "errors": [r["variant"] for r in recs if "error" in r]}
        doc["summary"].append(row)
        fmt = lambda x, f="{:.0f}": f.format(x) if x else "-"  # noqa: E731
        print(f"D={D} T={T} causal={causal}: {row['best']} {fmt(row['tflops'])} | cuDNN {fmt(cudnn)} "
              f"(x{fmt(row['vs_cudnn'], '{:.2f}')}) | hopper {fmt(hopper)} (x{fmt(row['vs_hopper'], '{:.2f}')})"
              + (f" | errors: {', '.join(row['errors'])}" if row["errors"] else ""), flush=True)
    if pingpong:
        compare(doc, all_shapes)
    doc["complete"] = not hung and all("skipped" not in r.get("error", "") for r in doc["records"])
    doc["elapsed_s"] = round(time.time() - t_start, 1)
    save()
    print(f"elapsed {doc['elapsed_s']} s, complete={doc['complete']}, written {out}", flush=True)
    if hung:
        os._exit(3)  # a hung kernel keeps the CUDA context busy: do not wait for it at exit


def compare(doc, all_shapes):
    """--pingpong: per shape the ratios ping-pong / choose() and (D 128) three / two stages, and each to cuDNN."""
    print(f"\n{doc['device']}: ping-pong against choose(), 3 stages against 2 (ratios of median TFLOP/s)", flush=True)
    doc["compare"] = []
    for D, T, causal in all_shapes:
        recs = [r for r in doc["records"] if (r["D"], r["T"], r["causal"]) == (D, T, causal)]
        chosen = fg.choose(D, T, causal)
        get = lambda cfg: next((r.get("tflops") for r in recs if r.get("config") == cfg._asdict()), None)  # noqa: E731
        ratio = lambda a, b: a / b if a and b else None  # noqa: E731
        cudnn = next((r.get("tflops") for r in recs if r["variant"] == "sdpa cudnn"), None)
        row = {"D": D, "T": T, "causal": causal, "choose": chosen.name(), "sdpa cudnn": cudnn,
               "choose_tflops": get(chosen), "pingpong_tflops": get(chosen._replace(pingpong=True)),
               "pingpong_vs_choose": ratio(get(chosen._replace(pingpong=True)), get(chosen)),
               "choose_vs_cudnn": ratio(get(chosen), cudnn),
               "pingpong_vs_cudnn": ratio(get(chosen._replace(pingpong=True)), cudnn)}
        if D == 128:
            s2, s3 = get(fg.Config(128, 128, 2, 2)), get(fg.Config(128, 128, 3, 2))
            row.update(s2_tflops=s2, s3_tflops=s3, s3_vs_s2=ratio(s3, s2), s3_vs_cudnn=ratio(s3, cudnn))
        doc["compare"].append(row)
        fmt = lambda x: f"{x:.3f}" if x else "-"  # noqa: E731
        print(f"D={D} T={T} causal={causal}: {chosen.name()} pingpong/choose {fmt(row['pingpong_vs_choose'])} "
              f"(choose/cuDNN {fmt(row['choose_vs_cudnn'])}, pingpong/cuDNN {fmt(row['pingpong_vs_cudnn'])})"
              + (f" | s3/s2 {fmt(row['s3_vs_s2'])} (s3/cuDNN {fmt(row['s3_vs_cudnn'])})" if D == 128 else ""),
              flush=True)


if __name__ == "__main__":
    main()
