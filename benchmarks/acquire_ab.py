"""A/B on a GPU: what wait_partials' acquire costs the long-row fast paths.

Without it (the unfixed variant), wait_partials issues an atomic add of 0 whose result goes unused, which Triton
drops: no acquire in the PTX, only the spin of volatile loads. This builds that variant from the current sources
(text substitution into copies of softmax_long_rows.py and softmax_split_rows.py, imported under other names) and
times both fast paths side by side, interleaved, in one process (course.timing.bench, each warmed 0.2 s first),
outputs checked against torch.softmax.

    python benchmarks/acquire_ab.py OUT.json
"""
import importlib.util
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

from course import timing  # noqa: E402
from kernels_ref.ch03_online_softmax import softmax_split_rows as new  # noqa: E402
from kernels_ref.report import warm  # noqa: E402

SRC = os.path.join(ROOT, "kernels_ref", "ch03_online_softmax")
NEW_WAIT = """    n = tl.minimum(tl.atomic_add(cnt, 0, sem="acquire"), K)"""
OLD_WAIT = """    tl.atomic_add(cnt, 0, sem="acquire")
    n = K"""


def _old_modules(tmp: str):
    lr_src = open(os.path.join(SRC, "softmax_long_rows.py")).read()
    assert NEW_WAIT in lr_src, "softmax_long_rows.wait_partials changed: update benchmarks/acquire_ab.py"
    sr_src = open(os.path.join(SRC, "softmax_split_rows.py")).read()
    pkg = "kernels_ref.ch03_online_softmax"
    sr_src = sr_src.replace(f"{pkg}.softmax_long_rows", "old_long_rows").replace(
        f"from {pkg} import softmax_long_rows as long_rows", "import old_long_rows as long_rows")
    mods = {}
    for name, text in (("old_long_rows", lr_src.replace(NEW_WAIT, OLD_WAIT)), ("old_split_rows", sr_src)):
        path = os.path.join(tmp, name + ".py")
        with open(path, "w") as f:
            f.write(text)
        spec = importlib.util.spec_from_file_location(name, path)
        mods[name] = importlib.util.module_from_spec(spec)
        sys.modules[name] = mods[name]
        spec.loader.exec_module(mods[name])
    return mods["old_split_rows"]


def main(out: str) -> int:
    import tempfile
    old = _old_modules(tempfile.mkdtemp())
    doc = {"gpu": torch.cuda.get_device_name(), "copy_gbps": timing.copy_gbps(1 << 30), "records": []}
    for rows, cols, dtype in ((1024, 131072, torch.float32), (2048, 131072, torch.bfloat16)):
        x = (torch.randn(rows, cols, device="cuda") * 3).to(dtype)
        y = torch.empty_like(x)
        want = torch.softmax(x.float(), -1)
        fns = {"acquire (today)": lambda: new.online_softmax_triton(x, y),
               "no acquire (before)": lambda: old.online_softmax_triton(x, y)}
        for rnd in range(3):
            for name, fn in fns.items():
                y.fill_(float("nan"))
                fn()
                torch.cuda.synchronize()
                err = (y.float() - want).abs().max().item()
                assert err < 1e-2, (name, err)
                warm({"fn": fn}, 0.2, torch.cuda.synchronize)
                ms = timing.bench(fn)
                pct = 100 * 2 * x.numel() * x.element_size() / (ms * 1e-3) / 1e9 / doc["copy_gbps"]
                doc["records"].append({"shape": [rows, cols], "dtype": str(dtype)[6:], "impl": name, "round": rnd,
                                       "config": new.config_for(x), "ms": ms, "pct": pct})
                print(f"{doc['gpu']}: {rows}x{cols} {dtype} {name:20} round {rnd}: {pct:.1f}%", flush=True)
        x = y = want = None
        torch.cuda.empty_cache()
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
