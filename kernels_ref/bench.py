"""Benchmark the reference solutions with the grader's own measurement, side by side
with PyTorch and the copy bandwidth, in one process:

    python -m kernels_ref.bench [--json out.json] [--sweep]

Also times the known-wrong submissions that are correct but slow (they lose only bandwidth
points), which the thresholds must reject.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile

import torch
import torch.nn.functional as F

import course
from autograder.declare import registry
from autograder.judge.grading import Failure, measure_bandwidth
from autograder.runner.local import LocalRunner
from autograder.declare.submission import cell_from_text, load
from autograder.instructor.submissions import for_chapter
from kernels_ref import notebook_part

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def reference_source(ex) -> str:
    src = notebook_part(os.path.join(ROOT, ex.solution))
    return ("%%cuda\n" + src) if ex.solution.endswith(".cu") else src


def chapter_cells(ex, replace: str | None = None) -> list:
    """The reference cells of ex's chapter, up to and including ex (later exercises may use the
    device functions of earlier ones), with ex's own cell replaced by `replace` if given."""
    cells = []
    for other in registry.all_exercises():
        if other.chapter != ex.chapter:
            continue
        src = replace if (other.id == ex.id and replace is not None) else reference_source(other)
        cells.append(cell_from_text(src, other.id.split(".", 1)[1]))
        if other.id == ex.id:
            break
    return cells


def namespace(ex, source: str, tmp: str) -> dict:
    return load(chapter_cells(ex, source), tmp)


TORCH_OPS = {  # PyTorch's own op for a chapter (or an exercise): (name, op(x, r, w, b))
    "ch01_softmax": ("torch.softmax", lambda x, *_: torch.softmax(x, dim=-1)),
    "ch02_reductions": ("torch.sum", lambda x, *_: x.sum(dim=-1)),
    "ch03_online_softmax": ("torch.softmax", lambda x, *_: torch.softmax(x, dim=-1)),
    "ch05.layernorm_cuda": ("F.layer_norm", lambda x, r, w, b: F.layer_norm(x, x.shape[-1:], w, b, 1e-5)),
    "ch05.layernorm_triton": ("F.layer_norm", lambda x, r, w, b: F.layer_norm(x, x.shape[-1:], w, b, 1e-5)),
    "ch05.rmsnorm_triton": ("F.rms_norm", lambda x, r, w, b: F.rms_norm(x, x.shape[-1:], w, 1e-5)),
    "ch05.rmsnorm_vec_cuda": ("F.rms_norm", lambda x, r, w, b: F.rms_norm(x, x.shape[-1:], w, 1e-5)),
    "ch05.add_rmsnorm_triton": ("x + r, F.rms_norm",  # both outputs, as the exercise writes them
                                lambda x, r, w, b: (F.rms_norm(h := x + r, x.shape[-1:], w, 1e-5), h)),
}


# Faster references that are not notebook cells (a teaching kernel and a fast one side by side): the module's
# entry point replaces the solution's, measured on the judge's clock like the rest. A CUDA one is a .cu file
# (path from the repository root) whose kernel of the same name, same contract and launch, replaces the cell.
FAST_REFERENCES = {
    "ch07.cross_entropy_triton": ("reference, split rows", "kernels_ref.ch07_cross_entropy.cross_entropy_split",
                                  "cross_entropy"),
    "ch03.online_softmax_triton": ("reference, split rows or cluster",
                                   "kernels_ref.ch03_online_softmax.softmax_split_rows", "online_softmax_triton"),
    "ch05.layernorm_cuda": ("reference, warp per row", "kernels_ref/ch05_fused_norms/layernorm_rows.cu",
                            "layernorm_welford"),
    "ch05.rmsnorm_vec_cuda": ("reference, warp per row", "kernels_ref/ch05_fused_norms/rmsnorm_rows.cu",
                              "rmsnorm_vec"),
    "ch04.flash_attention_triton": ("reference, Gluon on Hopper",
                                    "kernels_ref.ch04_flash_attention.flash_attention_fast", "flash_attention"),
}


def fast_reference_source(ex) -> tuple[str, str] | None:
    if ex.id not in FAST_REFERENCES:
        return None
    name, module, entry = FAST_REFERENCES[ex.id]
    if module.endswith(".cu"):
        return name, "%%cuda\n" + notebook_part(os.path.join(ROOT, module))
    return name, reference_source(ex) + f"\n\nfrom {module} import {entry}  # noqa: E402,F811\n"


def torch_baseline(ex, shape):
    """PyTorch's own op on the same shape, where the chapter has one: (name, GB/s)."""
    from course import timing
    entry = TORCH_OPS.get(ex.id) or TORCH_OPS.get(ex.chapter)
    if entry is None:
        return None
    name, op = entry
    dt = getattr(torch, ex.bench.dtype)
    x, r = (torch.randn(*shape, device="cuda", dtype=dt) for _ in range(2))
    w, b = (torch.randn(shape[-1], device="cuda", dtype=dt) for _ in range(2))
    ms = timing.bench(lambda: op(x, r, w, b))
    return name, timing.gbps(ex.bench.nbytes(shape), ms)


def attention_baselines(ex, shape) -> list:
    """SDPA's cuDNN backend next to its flash backend (the graded baseline), same inputs and timing."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from course import timing
    b = ex.bench
    q, k, v = (torch.randn(*shape, device="cuda", dtype=getattr(torch, b.dtype)) for _ in range(3))
    causal = "causal" in b.kind
    rows = []
    for name, backend in (("sdpa flash", SDPBackend.FLASH_ATTENTION), ("sdpa cudnn", SDPBackend.CUDNN_ATTENTION)):
        def call():
            with sdpa_kernel(backend):
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        try:
            ms = timing.bench(call)
        except RuntimeError as e:
            rows.append({"exercise": ex.id, "shape": list(shape), "variant": name, "error": str(e)[:200]})
            continue
        rows.append({"exercise": ex.id, "shape": list(shape), "variant": name, "ms": ms,
                     "tflops": b.flops(shape, b.kind) / (ms * 1e-3) / 1e12, "fraction": float("nan")})
    flash = rows[0].get("tflops")
    for r in rows:
        if flash and "tflops" in r:
            r["fraction"] = r["tflops"] / flash
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--sweep", action="store_true", help="also sweep the row length (for the plot)")
    ap.add_argument("--chapter", help="only these exercises: a chapter prefix (ch04) or an exercise's id "
                                       "(ch07.linear_cross_entropy_triton)")
    args = ap.parse_args()
    if not course.GPU:
        print("kernels_ref.bench needs a GPU")
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for ex in registry.all_exercises():
            wanted = not args.chapter or ex.chapter.startswith(args.chapter) or ex.id == args.chapter
            if ex.bench is None or not wanted:
                continue
            variants = [("reference", reference_source(ex))]
            if fast_reference_source(ex):
                variants.append(fast_reference_source(ex))
            for w in for_chapter(ex.chapter):  # only the correct-but-slow ones: the others may hang
                if w.exercise == ex.id and all(g.endswith(("_bandwidth", "_throughput")) for g in w.loses):
                    variants.append((f"wrong/{w.name}", w.apply(reference_source(ex))))
            shapes = [ex.bench.shape, *ex.bench.also]
            if args.sweep and ex.bench.flops is None:
                shapes += [(ex.bench.shape[0], c) for c in (512, 1024, 2048, 4096, 16384)]
            for shape in shapes:
                for name, src in variants:
                    try:
                        m = measure_bandwidth(ex, LocalRunner(namespace(ex, src, tmp)), 0, audited=False, shape=shape)
                    except Failure as e:
                        m = {"exercise": ex.id, "shape": list(shape), "error": str(e)[:200]}
                    except Exception as e:  # noqa: BLE001  (a fast reference that cannot load: say so, go on)
                        if name == "reference" or name.startswith("wrong/"):
                            raise
                        m = {"exercise": ex.id, "shape": list(shape), "error": f"{type(e).__name__}: {str(e)[:180]}"}
                    m["variant"] = name
                    rows.append(m)
                if ex.bench.flops is not None:
                    if ex.chapter == "ch04_flash_attention":  # the forward's peers: SDPA's flash and cuDNN
                        rows += attention_baselines(ex, shape)
                    continue
                tb = torch_baseline(ex, shape)
                if tb is not None:
                    copy = [r for r in rows if r.get("variant") == "reference" and r["shape"] == list(shape)
                            and r["exercise"] == ex.id and "copy_gbps" in r][-1]["copy_gbps"]
                    rows.append({"exercise": ex.id, "shape": list(shape), "variant": tb[0], "gbps": tb[1],
                                 "copy_gbps": copy, "fraction": tb[1] / copy})
    dev = course.device_name()
    print(f"\n{dev}")
    print(f"{'exercise':28} {'shape':>18} {'variant':34} {'GB/s|TF/s':>9} {'fraction':>9}")
    for r in rows:
        if "error" in r:
            print(f"{r['exercise']:28} {str(tuple(r['shape'])):>18} {r['variant']:34} {'-':>9} {'':>9} "
                  f"{r['error'][:60]}")
        elif "tflops" in r:  # throughput: a fraction of PyTorch's SDPA (flash backend) in the same run
            print(f"{r['exercise']:28} {str(tuple(r['shape'])):>18} {r['variant']:34} {r['tflops']:9.0f} "
                  f"{r['fraction']:8.2f}x")
        else:
            print(f"{r['exercise']:28} {str(tuple(r['shape'])):>18} {r['variant']:34} {r['gbps']:9.0f} "
                  f"{100 * r['fraction']:8.1f}%")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": dev, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
