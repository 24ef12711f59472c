"""Check and time the Gluon long-row softmax candidate (kernels_ref/ch03_online_softmax/softmax_long_rows_gluon.py)
beside the fast path as it stands (softmax_split_rows.online_softmax_triton, "fast-default"), on a GPU.

    PYTHONPATH=$PWD python3 benchmarks/softmax_gluon_check.py OUT.json

One process, meant to take under 150 s on an H100 (BUDGET_S: whatever is left past it is recorded as skipped).
Measures the copy (course.timing.copy_gbps(1 << 30)), then:

1. Edge checks, untimed, with each dtype's CONFIGS entry: a width that leaves a last partial chunk (TMA's zero fill
   past the row must count as -inf, its store must be clipped), rows holding -inf, a chunk of only -inf and a row of
   only -inf (NaN, as torch.softmax). Against torch.softmax in float32; NaN where torch has NaN.
2. Per shape (1024x131072 float32, 2048x131072 bfloat16, 1024x262144 bfloat16): every config of SWEEP[dtype]
   (CONFIGS' first), then the fast path. Each output is first checked against torch.softmax in float32 (tolerance
   as benchmarks/softmax_long_rows_sweep.py's _softmax_check: 1e-5 float32, 2^-7 bfloat16, relative to the largest
   output), then run untimed for 0.2 s (kernels_ref.report.warm) and timed by course.timing.bench (L2 flushed,
   median). A wrong output, a compile error or any exception gives an error record and no time.

pct = % of the copy measured in the same run; bytes = 2 x x.numel() x element size (x read once, y written once).
Records are printed as they come and the JSON is rewritten after each:

    {"gpu", "sms", "copy_gbps", "triton", "records": [{"check" | "shape", "dtype", "impl", "config", "K",
     "smem_per_program", "fit_per_sm", "ms", "gbps", "pct", "err"} or {..., "error"}], "best": {"RxC dtype": ...}}

"best": per shape the fastest Gluon config with the fast path's % beside it. A call that makes no progress for
WATCHDOG_S (a hang: programs waiting for each other, or an mbarrier phase never completed) gets an error record,
the JSON is written and the process exits with code 3 (a hung GPU kernel cannot be cancelled from Python).
Exit code 0 when every check passed, 1 when any record has an error.
"""
import sys
import time

import sweeplib
import torch

from course import timing
from kernels_ref.ch03_online_softmax import softmax_long_rows_gluon as sg
from kernels_ref.ch03_online_softmax import softmax_split_rows as fast

BUDGET_S = 140
WATCHDOG_S = 45
SHAPES = [(1024, 131072, torch.float32), (2048, 131072, torch.bfloat16), (1024, 262144, torch.bfloat16)]
TOL = {torch.float32: 1e-5, torch.bfloat16: 2.0**-7, torch.float16: 2.0**-9}


def _name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


class Check(sweeplib.Sweep):
    def __init__(self, out_path):
        import triton
        props = torch.cuda.get_device_properties(0)
        self.sms = props.multi_processor_count
        super().__init__(out_path, {"gpu": torch.cuda.get_device_name(), "sms": self.sms, "copy_gbps": None,
                                    "triton": triton.__version__, "records": [], "best": {}},
                         budget_s=BUDGET_S, watchdog_s=WATCHDOG_S)

    def finish(self):
        self.doc["best"] = sweeplib.best_with_baselines(
            self.doc["records"], lambda r: f"{r['shape'][0]}x{r['shape'][1]} {r['dtype']}" if r.get("shape") else None,
            "gluon")
        self.write()


def check_against_torch(fn, y, want, dtype):
    """Run fn once into y (filled with NaN first) and return the max error; AssertionError if it is too large.
    Where torch.softmax gives NaN (a row of -inf) the output must be NaN too."""
    y.fill_(float("nan"))
    fn()
    torch.cuda.synchronize()
    got = y.float()
    nan = torch.isnan(want)
    if not torch.equal(torch.isnan(got), nan):
        raise AssertionError(f"wrong output: NaN at {int((torch.isnan(got) != nan).sum())} places torch does not "
                             "agree with")
    ok = ~nan
    err = (got[ok] - want[ok]).abs().max().item() if bool(ok.any()) else 0.0
    if not err <= TOL[dtype] * max(1.0, want[ok].abs().max().item()):
        raise AssertionError(f"wrong output: max error {err:.3g}")
    return err


def describe(x, cfg):
    isz = x.element_size()
    return {"config": cfg._asdict(), "config_name": cfg.name(), "K": -(-x.shape[1] // cfg.CHUNK),
            "smem_per_program": sg.smem_bytes(cfg, isz), "fit_per_sm": sg.programs_per_sm(cfg, isz)}


def edge_checks(ck):
    """Untimed: a last partial chunk, -inf entries, an all -inf chunk, an all -inf row (CONFIGS' entries)."""
    for dtype in (torch.float32, torch.bfloat16):
        cfg = sg.CONFIGS[_name(dtype)]
        cols = 8 * cfg.CHUNK + 768  # K = 9, the last chunk 768 columns (3 of its 256-column rows)
        rows = 64
        gen = torch.Generator(device="cuda").manual_seed(2)
        x = (torch.randn(rows, cols, device="cuda", generator=gen) * 3).to(dtype)
        x[1, 5::7] = float("-inf")                      # scattered -inf
        x[2, cfg.CHUNK:2 * cfg.CHUNK] = float("-inf")   # a whole chunk of -inf
        x[3, :] = float("-inf")                         # a whole row: NaN, as torch.softmax
        x[4, -768:] = float("-inf")                     # the partial last chunk all -inf
        x[5, -1] = 80.0                                 # the row's max in the partial last chunk
        x[6] += 1000.0                                  # large values (the difference taken before scaling)
        y = torch.empty_like(x)
        want = torch.softmax(x.float(), dim=-1)

        def run(x=x, y=y, want=want, dtype=dtype, cfg=cfg):
            sg.reset_counters()
            return 0.0, check_against_torch(lambda: sg.softmax_gluon(x, y, cfg), y, want, dtype)
        r = dict({"check": "edges: partial last chunk, -inf entries, -inf chunk and row", "shape": None,
                  "dtype": _name(dtype), "impl": "gluon", "cols": cols}, **describe(x, cfg))
        ck.current, ck.last_progress = r, time.time()
        try:
            _, err = run()
            ck.record(dict(r, err=err))
        except Exception as e:  # noqa: BLE001  (recorded; the timed shapes still run)
            ck.record(dict(r, error=f"{type(e).__name__}: {e}".splitlines()[0][:300]))


def time_one(ck, base, fn, y, want, dtype, nbytes, reset=False):
    def run():
        if reset:
            sg.reset_counters()  # counters an earlier failed launch left behind cannot leak into this one
        err = check_against_torch(fn, y, want, dtype)
        from kernels_ref.report import warm
        warm({"fn": fn}, 0.2, torch.cuda.synchronize)
        return timing.bench(fn), err
    ck.measure(dict(base), run, nbytes)


def shapes(ck):
    for rows, cols, dtype in SHAPES:
        gen = torch.Generator(device="cuda").manual_seed(0)
        x = torch.randn(rows, cols, device="cuda", generator=gen).mul_(3).to(dtype)
        y = torch.empty_like(x)
        want = torch.softmax(x.float(), dim=-1)
        nbytes = 2 * x.numel() * x.element_size()
        ident = {"shape": [rows, cols], "dtype": _name(dtype)}
        for cfg in sg.SWEEP[_name(dtype)]:
            def fn(cfg=cfg):
                sg.softmax_gluon(x, y, cfg)
            time_one(ck, dict(ident, impl="gluon", **describe(x, cfg)), fn, y, want, dtype, nbytes, reset=True)
        fd = lambda: fast.online_softmax_triton(x, y)  # noqa: E731
        time_one(ck, dict(ident, impl="fast-default", config=fast.config_for(x)), fd, y, want, dtype, nbytes)
        x = y = want = None  # freed before the next shape's inputs
        torch.cuda.empty_cache()


def main(argv):
    if not sweeplib.gpu_args(argv, __doc__):
        return 2
    ck = Check(argv[1])
    ck.doc["copy_gbps"] = timing.copy_gbps(1 << 30)
    print(f"{ck.doc['gpu']} {ck.sms} SMs, copy {ck.doc['copy_gbps']:.0f} GB/s, triton {ck.doc['triton']}",
          flush=True)
    edge_checks(ck)
    shapes(ck)
    sweeplib.close(ck, "best Gluon config per shape (% of copy; fast-default beside it):",
                   lambda r: f"{r['pct']:.1f}% {r['config_name']}; {r['baselines']}", argv[1])
    return 1 if any("error" in r for r in ck.doc["records"]) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
