"""What the GPU sweeps share (softmax_fast_sweep.py, softmax_long_rows_sweep.py): a JSON document rewritten after
every record, a time budget past which the candidates left are recorded as skipped, and a watchdog that writes what
it has and exits with code 3 when one call makes no progress (a hung GPU kernel cannot be cancelled from Python).

    sw = Sweep(out_path, doc, budget_s=..., watchdog_s=...)   # doc: {"copy_gbps": ..., "records": [], ...}
    sw.measure(record, run, nbytes)                           # run() -> (ms, err); raises if the output is wrong
"""
from __future__ import annotations

import json
import os
import threading
import time


class Sweep:
    def __init__(self, out_path: str, doc: dict, budget_s: float, watchdog_s: float, poll_s: float = 2.0):
        self.out_path, self.doc, self.budget_s, self.watchdog_s = out_path, doc, budget_s, watchdog_s
        self.t0, self.current, self.last_progress = time.time(), None, time.time()
        threading.Thread(target=self._watchdog, args=(poll_s,), daemon=True).start()

    def _watchdog(self, poll_s):
        while True:
            time.sleep(poll_s)
            if self.current is not None and time.time() - self.last_progress > self.watchdog_s:
                self.doc["records"].append(dict(self.current, error=f"hung: no progress for {self.watchdog_s} s "
                                                "(watchdog exit)"))
                print(f"HUNG: {self.current}", flush=True)
                self.finish()
                os._exit(3)

    def finish(self):
        """Called once at the end (and by the watchdog): subclasses add their summary, then write."""
        self.write()

    def write(self):
        tmp = self.out_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.doc, f, indent=1)
        os.replace(tmp, self.out_path)

    def record(self, r: dict):
        self.doc["records"].append(r)
        print(json.dumps(r), flush=True)
        self.write()
        self.last_progress = time.time()

    def measure(self, r: dict, run, nbytes: int):
        """Record r with run()'s time as GB/s and % of doc["copy_gbps"], or with the error that stopped it."""
        self.current, self.last_progress = r, time.time()
        if time.time() - self.t0 > self.budget_s:
            self.record(dict(r, error=f"skipped: past the {self.budget_s} s budget"))
            return
        try:
            ms, err = run()
        except Exception as e:  # noqa: BLE001  (a config that cannot compile, run or is wrong: recorded, go on)
            self.record(dict(r, error=f"{type(e).__name__}: {e}".splitlines()[0][:300]))
            return
        gbps = nbytes / (ms * 1e-3) / 1e9
        self.record(dict(r, ms=ms, gbps=gbps, pct=100 * gbps / self.doc["copy_gbps"], err=err))


def close(sw: Sweep, title: str, line, out_path: str) -> None:
    """A sweep's last lines: sw.finish() (which fills doc["best"]), then `title`, `line(record)` for each shape's
    best record, and the time taken."""
    sw.current = None
    sw.finish()
    print(title, flush=True)
    for key, r in sw.doc["best"].items():
        print(f"  {key}: {line(r)}", flush=True)
    print(f"done in {time.time() - sw.t0:.0f} s; wrote {out_path}", flush=True)


def best_with_baselines(records, key, candidate: str) -> dict:
    """{key(r): the fastest record (by "pct") whose impl is `candidate`, plus "baselines": {impl: pct} of the other
    impls with that key}; records without "pct" (errors) or for which key returns None are left out."""
    best, base = {}, {}
    for r in records:
        k = key(r) if "pct" in r else None
        if k is None:
            continue
        if r["impl"] == candidate:
            if k not in best or r["pct"] > best[k]["pct"]:
                best[k] = r
        else:
            base.setdefault(k, {})[r["impl"]] = round(r["pct"], 1)
    return {k: dict(v, baselines=base.get(k, {})) for k, v in best.items()}


def gpu_args(argv, doc: str) -> bool:
    """A sweep's command line (one argument: the JSON to write) on a GPU: False (after saying why) if not."""
    import course
    if len(argv) != 2:
        print(doc)
        return False
    if not course.GPU:
        print("needs a GPU")
        return False
    return True


def time_rounds(report, case, impls: dict, bench, rounds: int, doc: dict) -> None:
    """kernels_ref.report.measure over impls, `rounds` times interleaved; every record into doc["records"].
    Every round in the same order (impls' own: A B C, A B C), unlike the report's rounds (report.round_order)."""
    for rnd in range(rounds):
        for r in report.measure(case, impls, bench, rounds=1):
            r["round"] = rnd
            doc["records"].append(r)
            print(report._line(r) if len(r["impl"]) < 15 else f"{r['impl']}: {r.get('gbps') or 0:.0f} GB/s",
                  flush=True)


def pct_by_impl(doc: dict) -> dict:
    """Fill pct_copy (against doc["copy_gbps"]) in every bandwidth record; {"kernel RxC dtype": {impl: [pct per
    round]}}."""
    out: dict = {}
    for r in doc["records"]:
        if r.get("gbps") is not None:
            r["pct_copy"] = 100 * r["gbps"] / doc["copy_gbps"]
            key = f"{r['kernel']} {r['shape'][0]}x{r['shape'][1]} {r['dtype']}"
            out.setdefault(key, {}).setdefault(r["impl"], []).append(round(r["pct_copy"], 1))
    return out


def report_doc(report, **extra) -> dict:
    """A probe's JSON document in the report's way: one ptxas pinned for every Triton kernel of the process (as the
    report pins it), the GPU's name, a copy timed now, no records yet, and `extra`."""
    import torch

    from course import timing
    ptxas = report.pin_ptxas(None)
    if ptxas is None:  # as report.main: without one pinned ptxas, kernels compiled by two could be compared
        raise SystemExit("the ptxas to pin was not found (kernels_ref.report.pin_ptxas)")
    return {"gpu": torch.cuda.get_device_name(), "copy_gbps": timing.copy_gbps(report.COPY_BYTES), "records": [],
            "ptxas": ptxas, **extra}
