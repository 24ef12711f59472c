"""GPU sweep for Chapter 3's fast softmax (kernels_ref/ch03_online_softmax/softmax_split_rows.py): which kernel and
configuration to put in its CONFIGS table, for the benchmark report's five softmax shapes.

    python benchmarks/softmax_fast_sweep.py OUT.json

One process, about 100-150 s on an H100. Measures the copy bandwidth (course.timing.copy_gbps(1 << 30)), then per
shape (most important first: the exercise's timed shape 1024 x 131072 float32) times with course.timing.bench:
torch.softmax, the two-read reference (the notebook's solution), Liger-Kernel (where installed), Chapter 1's kernel
(float32 only), the fast path as it stands ("fast-default", config = what CONFIGS picks) and the candidates below.
Every output is first checked against torch.softmax in float32 (max error recorded; a wrong one gets an error record
and no time). Each record is printed as it comes and the JSON is rewritten after each one:

    {"gpu", "sms", "copy_gbps", "records": [{"shape", "dtype", "impl", "config", "ms", "gbps", "pct", "err"} or
                                            {..., "error"}], "best": {"RxC dtype": record}}

To update CONFIGS: for each shape, take the fastest record whose impl is "candidate" or "fast-default" ("best"
lists them) and copy its "config" dict into CONFIGS[dtype] at the entry whose width covers the shape's columns.
A split config whose K = ceil(cols / chunk) exceeds the SM count is refused (error record), never launched; a
watchdog writes the JSON and exits (code 3) if one call takes more than 60 s (a hang: the record says which).
"""
import sys

import sweeplib
import torch

import course
from course import timing
from kernels_ref.ch01_softmax import softmax_triton as ch01
from kernels_ref.ch03_online_softmax import online_softmax_triton as ref
from kernels_ref.ch03_online_softmax import softmax_split_rows as fast

BUDGET_S = 200  # candidates left when this many seconds have passed are recorded as skipped


def S(chunk, warps, per_sm, hold="e"):
    return {"kernel": "split", "chunk": chunk, "warps": warps, "per_sm": per_sm, "hold": hold}


def R(warps, rows=1):
    return {"kernel": "rows", "warps": warps, "rows": rows}


def T(block, warps):
    return {"kernel": "two_pass", "block": block, "warps": warps}


# (rows, cols, dtype) -> candidates, best guesses first. Register counts (ptxas, sm_90a, compiled without a GPU,
# no spills): split float32 16384/4 warps 212 (2 per SM), 32768/8 209 (1 per SM), 8192/4 114, 8192/8 75;
# bfloat16 16384/4 173 (2 per SM), 32768/8 254 (1 per SM), 8192/4 96; 32768/4 spills (not listed).
# rows kernel: float32 8192/8 warps 53, 32768/32 51; bfloat16 32768/32 62, 32768/16 128.
CANDIDATES = [
    ((1024, 131072, torch.float32), [S(16384, 4, 2), S(16384, 4, 3), S(16384, 4, 2, "x"), S(32768, 8, 1),
                                     S(32768, 8, 1, "x"), S(8192, 4, 4), S(8192, 2, 6), S(16384, 8, 2),
                                     T(4096, 8), T(8192, 16)]),
    ((2048, 131072, torch.bfloat16), [S(16384, 4, 4), S(16384, 4, 2), S(16384, 4, 4, "x"), S(32768, 8, 1, "x"),
                                      S(32768, 8, 2, "x"), S(32768, 8, 1), S(8192, 2, 8), S(8192, 4, 4),
                                      S(16384, 8, 2), T(4096, 8), T(8192, 16)]),
    ((4096, 32768, torch.bfloat16), [T(16384, 16), R(32), R(16), S(16384, 4, 4), S(16384, 4, 4, "x"), S(8192, 4, 4),
                                     S(16384, 4, 2), T(4096, 8), T(8192, 16), T(8192, 8), T(16384, 8),
                                     T(32768, 16), T(32768, 32)]),
    ((16384, 4096, torch.bfloat16), [R(8), R(4), R(16), R(8, 2), R(4, 2)]),
    ((8192, 8192, torch.float32), [R(8), R(16), R(4), R(32)]),
]


class Sweep(sweeplib.Sweep):
    def __init__(self, out_path):
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        super().__init__(out_path, {"gpu": torch.cuda.get_device_name(), "sms": sms, "copy_gbps": None,
                                    "records": [], "best": {}}, budget_s=BUDGET_S, watchdog_s=60, poll_s=5)

    def time_one(self, shape, dtype, impl, fn, x, y, want, config=None):
        rows, cols = shape
        r = {"shape": [rows, cols], "dtype": str(dtype).replace("torch.", ""), "impl": impl}
        if config is not None:
            r["config"] = config

        def run():
            y.fill_(float("nan"))
            out = fn()
            out = y if out is None else out
            torch.cuda.synchronize()
            err = (out.float() - want).abs().max().item()
            tol = {torch.float32: 1e-5, torch.bfloat16: 2.0**-7, torch.float16: 2.0**-9}[dtype]
            if not err <= tol * max(1.0, want.abs().max().item()):  # NaN included
                raise AssertionError(f"wrong output: max error {err:.3g}")
            from kernels_ref.report import warm  # untimed 0.2 s first (the report's order effect)
            warm({"fn": fn}, 0.2, torch.cuda.synchronize)
            return timing.bench(fn), err
        self.measure(r, run, 2 * rows * cols * x.element_size())


def _liger():
    try:
        from liger_kernel.ops.softmax import LigerSoftmaxFunction
        return LigerSoftmaxFunction.apply
    except Exception as e:  # noqa: BLE001
        return e


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    if not course.GPU:
        print("needs a GPU")
        return 2
    sw = Sweep(argv[1])
    sw.doc["copy_gbps"] = timing.copy_gbps(1 << 30)
    print(f"{sw.doc['gpu']} {sw.doc['sms']} SMs, copy {sw.doc['copy_gbps']:.0f} GB/s", flush=True)
    liger = _liger()
    for (rows, cols, dtype), cands in CANDIDATES:
        gen = torch.Generator(device="cuda").manual_seed(0)
        x = torch.randn(rows, cols, device="cuda", generator=gen).to(dtype)
        y = torch.empty_like(x)
        want = torch.softmax(x.float(), dim=-1)
        shape = (rows, cols)
        sw.time_one(shape, dtype, "fast-default", lambda: fast.online_softmax_triton(x, y), x, y, want,
                    config=fast.config_for(x))
        for cfg in cands:
            sw.time_one(shape, dtype, "candidate", lambda cfg=cfg: fast.run_config(x, y, cfg), x, y, want, config=cfg)
        sw.time_one(shape, dtype, "ref-two-read", lambda: ref.online_softmax_triton(x, y), x, y, want)
        sw.time_one(shape, dtype, "torch", lambda: torch.softmax(x, dim=-1), x, y, want)
        if dtype == torch.float32 and cols <= 16384:
            sw.time_one(shape, dtype, "ch01", lambda: ch01.softmax_triton(x, y), x, y, want)
        if not isinstance(liger, Exception):
            sw.time_one(shape, dtype, "liger", lambda: liger(x), x, y, want)
        x = y = want = None  # freed before the next shape's inputs
        torch.cuda.empty_cache()
    for r in sw.doc["records"]:
        key = f"{r['shape'][0]}x{r['shape'][1]} {r['dtype']}"
        if r["impl"] in ("candidate", "fast-default") and "pct" in r:
            if key not in sw.doc["best"] or r["pct"] > sw.doc["best"][key]["pct"]:
                sw.doc["best"][key] = r
    sweeplib.close(sw, "best (copy into softmax_split_rows.CONFIGS):", lambda r: f"{r['pct']:.1f}% {r['config']}",
                   argv[1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
