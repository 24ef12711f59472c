"""Helpers for the prose tests: the chapters' text, the data files their numbers come from, and readers."""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import statistics

import numpy as np
import pytest

from benchmarks import archive

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHAPTERS = sorted(d for d in os.listdir(os.path.join(ROOT, "source"))
                  if os.path.isfile(os.path.join(ROOT, "source", d, f"{d}.nb.md")))
GLOSSARY = os.path.join(ROOT, "course", "GLOSSARY.md")
DIAGRAMS = os.path.join(ROOT, "course", "diagrams")


def text(chapter: str) -> str:
    with open(os.path.join(ROOT, "source", chapter, f"{chapter}.nb.md"), encoding="utf-8") as f:
        return f.read()


def flat(chapter: str) -> str:
    """The chapter's text with every run of white space (line breaks included) made one space."""
    return re.sub(r"\s+", " ", text(chapter))


def load(rel: str):
    """A data file of the repository, or of the archive of measurement runs (benchmarks/archive.py) where the tree
    no longer holds it: JSON parsed, anything else as text."""
    path = os.path.join(ROOT, rel)
    if not os.path.exists(path) and archive.is_archived(rel):
        return archive.read(rel)
    with open(path, encoding="utf-8") as f:
        return json.load(f) if rel.endswith(".json") else f.read()


def exists(rel: str) -> bool:
    return os.path.exists(os.path.join(ROOT, rel)) or archive.is_archived(rel)


def quoted(chapter: str, pattern: str) -> list[float]:
    m = re.search(pattern, flat(chapter))
    assert m, f"{chapter}: the text no longer says {pattern!r}; update tests/test_prose.py with it"
    return [float(g.replace(" ", "").replace("\\,", "")) for g in m.groups()]


# ---------------------------------------------------------------- students have only the course

# What a student never meets: the notes the course grew from, the instructor's files (references, benchmark
# data, thresholds, tests), dated runs and their letters, commits, the commands that made them, work periods.
PRIVATE = [r"\bseed notes?\b", r"\bthe seed's\b", r"BENCHMARKS\.md", r"notes this course grew from",
           r"kernels_ref", r"\bbenchmarks/", r"gpu_20\d\d-", r"\bs\d{1,2}/[a-h]\d?\b", r"thresholds\.(?:toml|d)",
           r"\btests/\w", r"\bautograder/\w", r"flashcourse (?:bench|calibrate|mutate|validate)",
           r"\bruns? [a-h]\d?(?=[),.;:]|\s+(?:and|of|in|on|above|below|shows?|reads?|read|measured)\b)",
           r"\bcommit [0-9a-f]{7}", r"\b(?:\w+(?:st|nd|rd|th)|this|last|next|earlier|later) session\b",
           r"\bsession \d+\b", r"\bwe have not (?:yet )?found out\b"]


def private_hits(body: str) -> list[str]:
    """Each place in `body` that names material students do not have, with a little context."""
    out = []
    for pat in PRIVATE:
        for m in re.finditer(pat, body, re.IGNORECASE):
            out.append(body[max(0, m.start() - 40):m.end() + 40].replace("\n", " "))
    return out


# ---------------------------------------------------------------- pictures

IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


# ---------------------------------------------------------------- glossary

LINK = re.compile(r"\]\((\.\./\.\./course/GLOSSARY\.md)(?:#([a-z0-9-]+))?\)")
# terms each chapter uses that a newcomer may not know: each must be linked to the glossary there
REQUIRED = {
    "ch01_softmax": ["kernel", "warp", "shared-memory", "l2", "hbm", "cuda-event", "coalescing", "sm",
                     "register", "register-spill", "bank-conflict", "roofline", "memory-bound", "flop"],
    "ch02_reductions": ["warp", "shared-memory", "bank-conflict", "divergence", "sm", "l2", "occupancy",
                        "coalescing"],
    "ch03_online_softmax": ["sm", "register", "shared-memory", "l2", "warp"],
    "ch04_flash_attention": ["tensor-core", "register", "register-spill", "l2", "hbm", "warp-specialisation",
                             "warp", "shared-memory", "warpgroup", "tma", "mbarrier", "setmaxnreg", "gluon"],
    "ch05_fused_norms": ["hbm", "tensor-core", "ulp", "warp", "register", "sm", "l2", "residual-stream",
                         "quantisation"],
    "ch06_low_precision": ["kernel", "warp", "register", "shared-memory", "ulp", "formats", "quantisation",
                           "fixed-point", "subnormal", "block-scaling", "logit", "tensor-core", "memory-bound"],
    "ch07_cross_entropy": ["logit", "ulp", "l2", "sm", "eviction-policy", "atomic", "log-sum-exp", "bandwidth",
                           "running-sum"],
}


def anchors() -> set[str]:
    return set(re.findall(r'<a id="([a-z0-9-]+)"></a>', load("course/GLOSSARY.md")))


# ---------------------------------------------------------------- measured numbers

def _progression() -> dict[str, tuple[float, float]]:
    """Chapter 3's GPU cell as recorded in course/figures/figures.json: name -> (GB/s, % of copy)."""
    ex = load("course/figures/figures.json")["examples"]["ch03_softmax_progression"]
    assert ex["device"].startswith("NVIDIA H100")
    out = {}
    for line in ex["printed"].splitlines():
        m = re.match(r"4096 x 2048\s+(.+?)\s+(\d+) GB/s\s+([\d.]+)% of copy", line)
        out[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return out


def _bench(rel: str, exercise: str, shape: list, variant: str) -> dict:
    data = load(rel)
    rows = [r for r in data["rows"] if r["exercise"] == exercise and r.get("shape") == shape
            and r["variant"] == variant]
    assert len(rows) == 1, (rel, exercise, shape, variant)
    return dict(rows[0], device=data["device"])


def _sweep(rel: str, T: int, D: int, causal: bool, variant: str) -> float:
    rows = [r for r in load(rel)["rows"] if (r["T"], r["D"], r["causal"], r["variant"]) == (T, D, causal, variant)]
    assert len(rows) == 1
    return rows[0]["tflops"]


H100_CH23 = "## Chapters 2 and 3 · NVIDIA H100"
H100_H200_CH4 = "## Chapter 4 · FlashAttention forward"
H200_CH5 = "## Chapter 5 · fused norms, NVIDIA H200"


def _benchmarks_md_row(prefix: str, section: str) -> str:
    """The first table row of BENCHMARKS.md's `section` that starts with `prefix`."""
    body = archive.read("BENCHMARKS.md")  # the work log as it stood when the runs were archived
    start = body.index(section)
    end = body.find("\n## ", start + 1)
    lines = [ln for ln in body[start:end if end > 0 else None].splitlines() if ln.startswith(prefix)]
    assert lines, (prefix, section)
    return lines[0]


def _benchmarks_md_block(prefix: str, section: str, rows: int = 3) -> str:
    body = archive.read("BENCHMARKS.md")
    i = body.index(prefix, body.index(section))
    return "\n".join(body[i:].splitlines()[:rows])


def _copy():
    d = load("benchmarks/prose_numbers_h100.json")
    assert d["device"].startswith("NVIDIA H100")
    return d["copy_sweep_gbps"]


READTHROUGH = "benchmarks/readthrough_h100.json"  # benchmarks/readthrough_measure.py on an H100


def _readthrough(what: str, **match) -> dict:
    data = load(READTHROUGH)
    assert data["gpu"].startswith("NVIDIA H100")
    rows = [r for r in data["records"] if r["what"] == what and all(r.get(k) == v for k, v in match.items())]
    assert len(rows) == 1 and "error" not in rows[0], (what, match)
    return rows[0]


def _sweep_tflops(doc, D, T, causal, variant) -> int:
    """TFLOP/s of one variant (its name's end) on one shape in an attention_gluon_check.py --psmem run of 3 rounds."""
    (rec,) = [r for r in doc["records"] if (r["D"], r["T"], r["causal"]) == (D, T, causal)
              and r["variant"].endswith(variant)]
    assert len(rec["ms_rounds"]) == 3
    return round(rec["tflops"])


def _run_cell(chapter: str, first_line: str) -> str:
    """Execute the chapter's free code cell that starts with `first_line` (figures discarded); its stdout."""
    import contextlib
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = re.findall(r"```python\n(.*?)```", text(chapter), re.S)
    (src,) = [c for c in cells if c.startswith(first_line)]
    out = io.StringIO()
    show, plt.show = plt.show, lambda *a, **k: None
    try:
        with contextlib.redirect_stdout(out):
            import torch

            setup = {"__name__": "cell", "math": math, "np": np, "torch": torch, "plt": plt}  # the setup cell's
            exec(compile(src, f"{chapter} cell", "exec"), setup)
    finally:
        plt.show = show
        plt.close("all")
    return out.getvalue()


S11 = "benchmarks/gpu_2026-11-27_s11"  # runs: a, b H100 sweeps, c H100 report, d H200 both


S12 = "benchmarks/gpu_2026-11-27_s12"  # runs: b H100 and c H200 cluster sweeps, g H200 and h H100 reports
S13 = "benchmarks/gpu_2026-11-27_s13"  # runs: a H100 cluster sweep with the guard for large maxima
S15 = "benchmarks/gpu_2026-11-28_s15"  # runs: s13h an H200 report (s13's run_h.sh, rerun with Liger)
S16 = "benchmarks/gpu_2026-11-28_s16"  # runs: a, b three consumer groups, P through shared memory
S17 = "benchmarks/gpu_2026-11-28_s17"  # runs: a, b 256-key tiles (D 64); d the H200 report with them
S18 = "benchmarks/gpu_2026-11-28_s18"  # runs: e row sums kept per thread (Config.lazy_sum)
S19 = "benchmarks/gpu_2026-11-29_s19"  # runs: a-c balanced schedules (Config.balanced), d the H200 report
S20 = "benchmarks/gpu_2026-11-29_s20"  # runs: a, b, d the seams (Config.q_bufs, .overlap); c, e H200 reports
S22 = "benchmarks/gpu_2026-11-29_s22"  # runs: c PIN_SWEEP on every report shape; d report; e report again
S23 = "benchmarks/gpu_2026-11-29_s23"  # runs: a PIN_OFF_SWEEP; c, e the flush; g1 report, g2 report again
S21 = "benchmarks/gpu_2026-11-29_s21"  # runs: a, b D 64 sweeps (row sums per thread on the seams); c report
FIRST_FAST = "9632b51"  # softmax_cluster.cu's SC_FAST as first written (before that guard)


def _log_pcts(rel: str) -> dict:
    """A report.log's softmax long rows, % of its copy (the GB/s printed to the unit; the copy on its last line),
    keyed by (shape, dtype), and the copy under "copy"."""
    log = load(rel)
    copy = float(re.search(r"copy ([\d.]+) GB/s; wrote", log).group(1))
    out = {"copy": copy}
    for shape, dtype in (LONG_F32, LONG_BF16):
        gbps = float(re.search(rf"softmax\s+{shape[0]}x{shape[1]}\s+{dtype}\s+flashcourse\s+([\d.]+) GB/s",
                               log).group(1))
        out[(tuple(shape), dtype)] = round(100 * gbps / copy, 1)
    return out


def _key(shape_dtype) -> tuple:
    return tuple(shape_dtype[0]), shape_dtype[1]


def _cluster_sweep(run: str, gpu: str) -> list[dict]:
    """The records of benchmarks/softmax_cluster_sweep.py's run `run` in S11, on `gpu`."""
    data = load(f"{S11}/{run}/cluster.json")
    assert data["gpu"] == gpu and load(f"{S11}/{run}/gpu.txt").strip() == gpu
    return data["records"]


def _sweep_pct(records: list[dict], impl: str, shape: list, dtype: str, config: dict | None = None) -> float:
    rows = [r for r in records if r["impl"] == impl and r["shape"] == shape and r["dtype"] == dtype
            and (config is None or r["config"] == config)]
    assert len(rows) == 1 and "error" not in rows[0], (impl, shape, dtype, config)
    return round(rows[0]["pct"], 1)


H100, H200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"
LONG_F32, LONG_BF16 = ([1024, 131072], "float32"), ([2048, 131072], "bfloat16")
# the Triton kernels the fast reference ran on long rows before the cluster kernel (CONFIGS of softmax_split_rows.py)
SPLIT_F32 = {"kernel": "split", "chunk": 16384, "warps": 4, "per_sm": 3, "hold": "e"}
TWO_READ_BF16 = {"kernel": "long_rows", "part": 32768, "block": 8192, "warps": 8, "per_sm": 3}


def _rounds(run: str, gpu: str, impl: str, shape_dtype, config: dict, session: str = S12) -> list[float]:
    """Every round's % of copy of one impl and config in a cluster sweep: run `run` of the archive folder
    `session` (S12's unless named), whose gpu.txt (or info.txt's first line) names `gpu`."""
    data = load(f"{session}/{run}/cluster.json")
    named = f"{session}/{run}/gpu.txt" if exists(f"{session}/{run}/gpu.txt") else \
        f"{session}/{run}/info.txt"
    assert data["gpu"] == gpu and load(named).splitlines()[0].strip() == gpu
    out = [round(r["pct"], 1) for r in data["records"] if r["impl"] == impl and r["shape"] == shape_dtype[0]
           and r["dtype"] == shape_dtype[1] and r["config"] == config]
    assert len(out) == 2, (run, impl, shape_dtype, config)  # two interleaved rounds
    return out


def _span(values) -> str:
    lo, hi = min(values), max(values)
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def statistics_mean(values: list[float]) -> float:
    return sum(values) / len(values)


__all__ = ['archive', 'exists', 'hashlib', 'json', 'math', 'os', 're', 'statistics', 'np', 'pytest', 'ROOT',
           'CHAPTERS', 'GLOSSARY', 'DIAGRAMS', 'text', 'flat', 'load', 'quoted', 'PRIVATE', 'IMAGE', 'LINK',
           'REQUIRED', 'anchors', '_progression', '_bench', '_sweep', 'H100_CH23', 'H100_H200_CH4', 'H200_CH5',
           '_benchmarks_md_row', '_benchmarks_md_block', '_copy', 'READTHROUGH', '_readthrough', '_sweep_tflops',
           '_run_cell', 'S11', 'S12', 'S13', 'S15', 'S16', 'S17', 'S18', 'S19', 'S20', 'S22', 'S23', 'S21',
           'FIRST_FAST', '_log_pcts', '_key', '_cluster_sweep', '_sweep_pct', 'SPLIT_F32', 'TWO_READ_BF16',
           '_rounds', '_span', 'statistics_mean', 'private_hits']
