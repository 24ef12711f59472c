"""The chapters' text as a student reads it: quoted numbers match the data they come from, no
reference to material students do not have, every picture exists, glossary links resolve, and the
diagrams are up to date with the script that draws them.

A number quoted in a chapter is either derived in the text or measured; each measured one is listed
in MEASURED below with the data file it comes from (which names its GPU), and each number the text
says a cell computes is recomputed here (COMPUTED tests). Change a measurement and this fails until
the text follows.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import statistics

import numpy as np
import pytest

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
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return json.load(f) if rel.endswith(".json") else f.read()


def quoted(chapter: str, pattern: str) -> list[float]:
    m = re.search(pattern, flat(chapter))
    assert m, f"{chapter}: the text no longer says {pattern!r}; update tests/test_prose.py with it"
    return [float(g.replace(" ", "").replace("\\,", "")) for g in m.groups()]


# ---------------------------------------------------------------- students have only the course

PRIVATE = [r"\bseed notes?\b", r"\bthe seed's\b", r"BENCHMARKS\.md", r"notes this course grew from"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_reference_to_material_students_do_not_have(chapter):
    release = load(f"release/{chapter}/{chapter}.ipynb")
    for where, body in ((f"source/{chapter}/{chapter}.nb.md", text(chapter)),
                        (f"release/{chapter}/{chapter}.ipynb", json.dumps(release, ensure_ascii=False))):
        for pat in PRIVATE:
            hit = re.search(pat, body, re.IGNORECASE)
            assert not hit, f"{where} mentions {hit.group(0)!r}: students do not have it"


def test_glossary_mentions_nothing_private():
    body = load("course/GLOSSARY.md")
    for pat in PRIVATE:
        assert not re.search(pat, body, re.IGNORECASE), pat


# ---------------------------------------------------------------- pictures

IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_image_exists_from_source_and_release(chapter):
    for ref in IMAGE.findall(text(chapter)):
        assert not re.match(r"[a-z]+://", ref), f"{chapter}: {ref} is not a file of the course"
        for folder in ("source", "release"):  # both are two levels down: one relative path serves both
            path = os.path.normpath(os.path.join(ROOT, folder, chapter, ref))
            assert os.path.isfile(path), f"{chapter}: {ref} does not exist (from {folder}/{chapter}/)"
            assert path.startswith(os.path.join(ROOT, "course") + os.sep), \
                f"{chapter}: {ref} is outside course/, which the student pack ships"
            assert os.path.getsize(path) < 60_000, f"{ref}: keep diagrams under 60 KB"


def test_diagrams_are_stamped_with_their_script():
    with open(os.path.join(DIAGRAMS, "make_diagrams.py"), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    stamp = open(os.path.join(DIAGRAMS, "STAMP"), encoding="utf-8").read().split("\n")
    assert stamp[0].endswith(digest), \
        "course/diagrams/make_diagrams.py changed: run `python course/diagrams/make_diagrams.py`"
    pngs = sorted(f for f in os.listdir(DIAGRAMS) if f.endswith(".png"))
    assert sorted(s for s in stamp[1:] if s) == pngs


def test_every_diagram_is_shown_somewhere():
    shown = {os.path.basename(ref) for ch in CHAPTERS for ref in IMAGE.findall(text(ch))}
    for png in os.listdir(DIAGRAMS):
        if png.endswith(".png"):
            assert png in shown, f"course/diagrams/{png} is not referenced by any chapter"


def test_diagrams_redraw_to_the_same_pictures(tmp_path):
    import importlib.util

    from PIL import Image

    spec = importlib.util.spec_from_file_location("make_diagrams", os.path.join(DIAGRAMS, "make_diagrams.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    drawn = mod.draw(str(tmp_path))
    assert sorted(os.path.basename(p) for p in drawn) == sorted(f for f in os.listdir(DIAGRAMS) if f.endswith(".png"))
    for p in drawn:
        committed = os.path.join(DIAGRAMS, os.path.basename(p))
        assert Image.open(p).size == Image.open(committed).size, f"{os.path.basename(p)}: redraw it"
        assert os.path.getsize(p) < 60_000


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
                             "warp", "shared-memory"],
    "ch05_fused_norms": ["hbm", "tensor-core", "ulp", "warp", "register", "sm", "l2"],
}


def anchors() -> set[str]:
    return set(re.findall(r'<a id="([a-z0-9-]+)"></a>', load("course/GLOSSARY.md")))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_glossary_links_resolve_and_terms_are_linked(chapter):
    links = LINK.findall(text(chapter))
    assert links, f"{chapter} never links the glossary"
    known = anchors()
    for _, anchor in links:
        assert not anchor or anchor in known, f"{chapter}: GLOSSARY.md#{anchor} does not exist"
    linked = {a for _, a in links if a}
    missing = [t for t in REQUIRED.get(chapter, []) if t not in linked]
    assert not missing, f"{chapter}: link these terms to the glossary on first use: {missing}"


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
    body = load("BENCHMARKS.md")
    start = body.index(section)
    end = body.find("\n## ", start + 1)
    lines = [ln for ln in body[start:end if end > 0 else None].splitlines() if ln.startswith(prefix)]
    assert lines, (prefix, section)
    return lines[0]


def _benchmarks_md_block(prefix: str, section: str, rows: int = 3) -> str:
    body = load("BENCHMARKS.md")
    i = body.index(prefix, body.index(section))
    return "\n".join(body[i:].splitlines()[:rows])


def _copy():
    d = load("benchmarks/prose_numbers_h100.json")
    assert d["device"].startswith("NVIDIA H100")
    return d["copy_sweep_gbps"]


def test_ch01_copy_numbers_match_the_h100_sweep():
    copy = _copy()
    (small,) = quoted("ch01_softmax", r"a 1 MiB copy ran at about (\d+) GB/s")
    assert abs(small - copy["1048576"]) <= 0.05 * copy["1048576"]
    (us,) = quoted("ch01_softmax", r"1 MiB in about ([\d.]+) µs")
    assert us == round(2**20 / (copy["1048576"] * 1e9) * 1e6, 1)
    (bytes_us,) = quoted("ch01_softmax", r"take ([\d.]+) µs")
    assert bytes_us == round(2**20 / (copy["1073741824"] * 1e9) * 1e6, 2)
    (l2,) = quoted("ch01_softmax", r"overshoots to about (\d+) GB/s at 32 MiB")
    assert abs(l2 - copy["33554432"]) <= 0.02 * copy["33554432"]
    (big,) = quoted("ch01_softmax", r"about (\d+) GB/s at 1 GiB")
    assert abs(big - copy["1073741824"]) <= 10
    printed = load("course/figures/figures.json")["examples"]["ch01_copy_bandwidth"]["printed"]
    assert abs(big - float(re.search(r"(\d+) GB/s", printed).group(1))) <= 10  # the example plot agrees
    l2_mib = load("benchmarks/prose_numbers_h100.json")["l2_bytes"] // 2**20
    assert f"{l2_mib} MiB of L2 on an H100" in flat("ch01_softmax")
    glossary_text = re.sub(r"\s+", " ", load("course/GLOSSARY.md"))
    (glossary,) = re.search(r"copy measures about (\d+) GB/s on an H100", glossary_text).groups()
    assert abs(float(glossary) - copy["1073741824"]) <= 10


@pytest.mark.parametrize("label, name", [("v1: 3-pass", "v1: 3-pass"), ("v2: online softmax", "v2: your warp per row"),
                                         ("v3: online softmax", "v3: your block per row"),
                                         ("Triton online softmax", "your Triton kernel"),
                                         ("`torch.softmax`", "torch.softmax")])
def test_ch02_progression_table_matches_the_recorded_h100_run(label, name):
    gbps, pct = _progression()[name]
    row = [ln for ln in text("ch02_reductions").splitlines() if ln.startswith(f"| {label}")]
    assert len(row) == 1, label
    cells = [c.strip() for c in row[0].strip("|").split("|")]
    assert float(cells[-2]) == gbps and float(cells[-1].rstrip("%")) == pct


def test_ch02_progression_byte_model():
    assert "$8 \\cdot 4096 \\cdot 2048$ bytes = 64 MiB" in flat("ch02_reductions")
    assert 8 * 4096 * 2048 == 64 * 2**20


def test_ch02_row_sum_fractions():
    cuda, triton_, torch_ = quoted("ch02_reductions", r"read ([\d.]+)% \(CUDA\) and ([\d.]+)% \(Triton\) "
                                   r"of the copy bandwidth, `torch.sum` ([\d.]+)%")
    block = _benchmarks_md_block("| ch02 CUDA row sum, 16384 x 8192", H100_CH23)
    assert f"**{cuda}%**" in block and f"| torch.sum | {torch_}% |" in block
    assert f"**{triton_}%**" in _benchmarks_md_row("| ch02 Triton row sum, 16384 x 8192", H100_CH23)


def test_ch03_progression_and_long_rows():
    p = _progression()
    warp, torch_, v1 = quoted("ch03_online_softmax", r"read ([\d.]+)% of the copy bandwidth at 4096 × 2048, "
                              r"ahead of `torch.softmax` \(([\d.]+)%\) and of the 3-pass v1 \(([\d.]+)%\)")
    assert (warp, torch_, v1) == (p["v2: your warp per row"][1], p["torch.softmax"][1], p["v1: 3-pass"][1])
    cuda, tri, three, tor = quoted("ch03_online_softmax", r"online kernels read ([\d.]+)% \(CUDA\) and ([\d.]+)% "
                                   r"\(Triton\) against a model ceiling of 67%, a 3-pass kernel ([\d.]+)% "
                                   r"\(ceiling 50%\), and `torch.softmax` ([\d.]+)%")
    block = _benchmarks_md_block("| ch03 block per row, 1024 x 131072", H100_CH23)
    assert f"**{cuda}%**" in block and f"3-pass (max, sum, write) | {three}%" in block
    assert f"| torch.softmax | {tor}% |" in block
    assert f"**{tri}%**" in _benchmarks_md_row("| ch03 Triton online, 1024 x 131072", H100_CH23)
    a, b = quoted("ch03_online_softmax", r"reference reads ([\d.]+)% and a 3-pass kernel ([\d.]+)%")
    assert (a, b) == (cuda, three)


READTHROUGH = "benchmarks/readthrough_h100.json"  # benchmarks/readthrough_measure.py on an H100


def _readthrough(what: str, **match) -> dict:
    data = load(READTHROUGH)
    assert data["gpu"].startswith("NVIDIA H100")
    rows = [r for r in data["records"] if r["what"] == what and all(r.get(k) == v for k, v in match.items())]
    assert len(rows) == 1 and "error" not in rows[0], (what, match)
    return rows[0]


def test_ch03_exercise_4_paths_measured():
    regs, scalar, vec = quoted("ch03_online_softmax", r"the registers path with `md_push` on every value read "
                               r"([\d.]+)% of the copy; the two-pass loop alone read ([\d.]+)% loading one float "
                               r"at a time and ([\d.]+)% with `float4` loads")
    what, shape = "ch03 ex4 warp per row", [4096, 2048]
    assert regs == _readthrough(what, shape=shape, kernel="taught variant (row in registers, md_push per value; "
                                "scalar two-pass otherwise)")["pct_copy"]
    assert scalar == _readthrough(what, shape=shape, kernel="two-pass only, one float at a time")["pct_copy"]
    assert vec == _readthrough(what, shape=shape, kernel="two-pass only, float4")["pct_copy"]
    assert load(READTHROUGH)["l2_bytes"] == 50 * 2**20  # "the 50 MiB L2 cache"
    assert 0 < vec - 70 < 2  # "clears the bar by about one point"


def test_ch05_reading_a_row_twice_measured():
    once, twice = quoted("ch05_fused_norms", r"8 KiB rows \(a softmax over 2048 `float32` columns, 256 MiB of input\): "
                         r"([\d.]+)% of the copy bandwidth reading each row once, ([\d.]+)% reading it twice")
    for kernel, quoted_pct in (("row in registers, read once", once), ("row in registers, read twice", twice)):
        r = _readthrough("re-read a row", kernel=kernel, shape=[32768, 2048])
        assert r["row_bytes"] == 8192 and r["bytes"] == 256 * 2**20 * 2 and r["pct_copy"] == quoted_pct


def test_ch04_speeds_match_the_recorded_h100_runs():
    ref = _bench("benchmarks/ch04_bench_h100.json", "ch04.flash_attention_triton", [4, 32, 4096, 128], "reference")
    flash = _bench("benchmarks/ch04_bench_h100.json", "ch04.flash_attention_triton", [4, 32, 4096, 128], "sdpa flash")
    cudnn = _bench("benchmarks/ch04_bench_h100.json", "ch04.flash_attention_triton", [4, 32, 4096, 128], "sdpa cudnn")
    sweep = "benchmarks/ch04_attention_sweep_h100.json"
    q_ref, f_lo, f_hi, c_lo, c_hi = quoted(
        "ch04_flash_attention", r"in Triton\) ran at about (\d+) TFLOP/s, PyTorch's flash backend \(FlashAttention-2\) "
        r"at (\d+) to (\d+) and its cuDNN backend at (\d+) to (\d+) \(two runs\)")
    for measured in (ref["tflops"], _sweep(sweep, 4096, 128, True, "triton reference")):
        assert abs(measured - q_ref) <= 10
    for lo, hi, runs in ((f_lo, f_hi, (flash["tflops"], _sweep(sweep, 4096, 128, True, "sdpa flash"))),
                         (c_lo, c_hi, (cudnn["tflops"], _sweep(sweep, 4096, 128, True, "sdpa cudnn")))):
        assert sorted(round(r, -1) for r in runs) == [lo, hi]
    four, eight = quoted("ch04_flash_attention", r"\): (\d+) TFLOP/s against (\d+) with 8 warps \(causal\)")
    assert _benchmarks_md_row("| 128, 64, 4, 3 |", H100_H200_CH4).rstrip(" |").endswith(f"| {int(four)}")
    assert _benchmarks_md_row("| 128, 64, 8, 3 |", H100_H200_CH4).rstrip(" |").endswith(f"**{int(eight)}**")
    (mat,) = quoted("ch04_flash_attention", r"three-kernel version ran at (\d+) TFLOP/s on an H100")
    assert f"| {int(mat)} (" in _benchmarks_md_row("| known-wrong: materialised S", H100_H200_CH4)
    assert 9.5 <= ref["tflops"] / mat <= 11  # "ten times slower"


def test_ch04_fast_reference_numbers():
    """The section on the Gluon fast reference: its derivation from NVIDIA's published H100 SXM figures, and its
    speeds against cuDNN from the committed H200 benchmark report (benchmarks/results/), the run it names."""
    ops, tflops, sms, ghz, exps, exp_rate = quoted(
        "ch04_flash_attention", r"about (\d+) `bfloat16` tensor-core FLOPs \((\d+) TFLOP/s over (\d+) SMs at "
        r"([\d.]+) GHz\) and (\d+) exponentials \(the special-function units: ([\d.]+) T/s\)")
    assert abs(tflops * 1e12 / (sms * ghz * 1e9) - ops) / ops < 0.01
    assert round(exps * sms * ghz / 1e3, 1) == exp_rate
    mm128, ex = quoted("ch04_flash_attention", r"At \$D = 128\$ that is \$([\d.]+)\$ against \$([\d.]+)\$")
    assert mm128 == 4 * 128 / ops and ex == 1 / exps
    doc = load("benchmarks/results/nvidia_h200.json")
    assert doc["gpu"] == "NVIDIA H200" and f"copy {round(doc['copy_gbps'])} GB/s" in load(f"{S23}/g/g1.log")
    att = {(r["shape"][3], r["shape"][2], r["causal"], r["impl"]): r["tflops"] for r in doc["records"]
           if r["kernel"] == "attention_fwd" and r.get("tflops")}
    ours, ours_c, cud, cud_c = quoted("ch04_flash_attention", r"fast reference ran at (\d+) TFLOP/s \(causal (\d+)\), "
                                      r"cuDNN at (\d+) \(causal (\d+)\)")
    assert [round(att[(128, 4096, c, i)]) for i in ("flashcourse", "sdpa-cudnn") for c in (False, True)] == [
        ours, ours_c, cud, cud_c]
    ahead, ahead_c = quoted("ch04_flash_attention", r"\(causal \d+\): (\d+)% ahead without the mask, (\d+)% with it")
    assert round(100 * (ours / cud - 1)) == ahead and round(100 * (ours_c / cud_c - 1)) == ahead_c
    lo, hi, lo_c, hi_c, lo_all, hi_all, n_ahead = quoted(
        "ch04_flash_attention", r"At \$D = 64\$ the fast reference reaches ([\d.]+) to ([\d.]+) times cuDNN, and "
        r"([\d.]+) to ([\d.]+) times when\s+causal; over all 20 shapes \(\$D\$ 64 and 128, with the mask and without, "
        r"\$T\$ from 1024 to 16 384\), ([\d.]+) to ([\d.]+) times, at or above "
        r"cuDNN on all (\d+)")
    def low(x):  # a ratio below 1 is quoted to three places (0.998), others to two
        return round(x, 3 if x < 1 else 2)
    for causal, (a, b) in ((False, (lo, hi)), (True, (lo_c, hi_c))):
        ratios = [att[(64, T, causal, "flashcourse")] / att[(64, T, causal, "sdpa-cudnn")]
                  for T in (1024, 2048, 4096, 8192, 16384)]
        assert (low(min(ratios)), round(max(ratios), 2)) == (a, b)
    every = [att[(D, T, c, "flashcourse")] / att[(D, T, c, "sdpa-cudnn")]
             for D in (64, 128) for T in (1024, 2048, 4096, 8192, 16384) for c in (False, True)]
    assert len(every) == 20 and (low(min(every)), round(max(every), 2)) == (lo_all, hi_all)
    assert sum(r >= 1 for r in every) == n_ahead
    # the row-sums bullet's aside: this report and the one before it (s20/e) at D 128 T 4096 causal
    now, before = quoted("ch04_flash_attention", r"report quoted below read (\d+) at \$T = 4096\$ with the mask, and "
                         r"an earlier one \(run\s+`benchmarks/gpu_2026-11-29_s20/e`\) (\d+)")
    old = {(r["shape"][3], r["shape"][2], r["causal"], r["impl"]): r["tflops"]
           for r in load(f"{S20}/e/nvidia_h200.json")["records"] if r["kernel"] == "attention_fwd" and r.get("tflops")}
    assert (now, before) == (round(att[(128, 4096, True, "flashcourse")]), round(old[(128, 4096, True, "flashcourse")]))
    # none behind; the closest shape, in this report and in the second process (s23/g2, not committed as the report)
    behind = {(D, T, c) for D in (64, 128) for T in (1024, 2048, 4096, 8192, 16384) for c in (False, True)
              if att[(D, T, c, "flashcourse")] < att[(D, T, c, "sdpa-cudnn")]}
    assert behind == set()
    close, close_e = quoted("ch04_flash_attention", r"and closest at \$D = 64\$, \$T = 1024\$ without the mask "
                            r"\(([\d.]+) times\)\. The same report\s+again in its second process was at or "
                            r"above cuDNN on all 20 too, closest at \$D = 64\$, \$T = 16\\,384\$ with the mask\s+"
                            r"\(([\d.]+) times\)")
    ratios = {k[:3]: att[k] / att[k[:3] + ("sdpa-cudnn", )] for k in att if k[3] == "flashcourse"}
    assert min(ratios, key=ratios.get) == (64, 1024, False) and round(ratios[(64, 1024, False)], 3) == close
    again = {(r["shape"][3], r["shape"][2], r["causal"], r["impl"]): r["tflops"]
             for r in load(f"{S23}/g/g2.json")["records"] if r["kernel"] == "attention_fwd"}
    assert load(f"{S23}/g/g2.json")["gpu"] == H200
    ratios_e = {k[:3]: again[k] / again[k[:3] + ("sdpa-cudnn", )] for k in again if k[3] == "flashcourse"}
    assert len(ratios_e) == 20 and min(ratios_e.values()) >= 1
    assert min(ratios_e, key=ratios_e.get) == (64, 16384, True) and round(ratios_e[(64, 16384, True)], 3) == close_e
    assert all(len(r["ms_rounds"]) == 3 for r in doc["records"] if r["kernel"] == "attention_fwd" and "ms_rounds" in r)
    assert any("ms_rounds" in r for r in doc["records"])  # "timed each kernel three times ... kept the median"
    # the two earlier runs, back to back (benchmarks/gpu_2026-11-26_s10/j and k: the same H100, their logs)
    lo1, hi1, lo2, hi2 = quoted("ch04_flash_attention", r"gave the\s+fast reference ([\d.]+) to ([\d.]+) and "
                                r"([\d.]+) to ([\d.]+) times cuDNN over the same\s+20 shapes")
    for run, (a, b) in (("j", (lo1, hi1)), ("k", (lo2, hi2))):
        assert "NVIDIA H100 80GB HBM3" in load(f"benchmarks/gpu_2026-11-26_s10/{run}/gpu.txt")
        rows = re.findall(r"attention_fwd\s+4x32x(\d+)x(\d+)\s+bfloat16\s+(\w+)\s+(\S+)\s+([\d.]+) TFLOP/s",
                          load(f"benchmarks/gpu_2026-11-26_s10/{run}/report.log"))
        k = {(T, D, mask, impl): float(v) for T, D, mask, impl, v in rows}
        r = [v / k[(T, D, mask, "sdpa-cudnn")] for (T, D, mask, impl), v in k.items() if impl == "flashcourse"]
        assert len(r) == 20 and (round(min(r), 2), round(max(r), 2)) == (a, b)


def test_ch04_three_groups():
    """Chapter 4's bullet on three consumer groups: the register count it derives (against the kernel's own split)
    and its measurements against the runs' JSON (attention_gluon_check.py --psmem, medians of 3 rounds, H200)."""
    from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg
    ch = "ch04_flash_attention"
    s_regs, p_regs, acc = quoted(ch, r"in `float32`, \$64 \\cdot 128 / 128 = (\d+)\$; the\s+probabilities \$P\$ in "
                                 r"`bfloat16` for the next product, (\d+) \(two to a register\); the output "
                                 r"accumulator,\s+\$64 \\cdot D / 128 = D/2\$, (\d+) at \$D = 128\$")
    assert (s_regs, p_regs, acc) == (64 * 128 // 128, 64 * 128 // 2 // 128, 128 // 2)
    two, allow, prod, three = quoted(ch, r"share the rest at (\d+) each \(`setmaxnreg` takes multiples of 8, so "
                                     r"\$\(512 - \d+\)/2 = (\d+)\$ rounds down\s+to \d+, FlashAttention-3's split\), "
                                     r"three at \$\(512 - (\d+)\)/3 \\approx \d+\$, rounded down likewise: (\d+)")
    assert prod == fg.Config(192, 128, 2, 3).producer_regs and allow == (512 - prod) // 2
    assert (two, three) == (fg.consumer_regs(fg.Config(128, 128, 2, 2)), fg.consumer_regs(fg.THREE_128))
    kib, in_use, of = quoted(ch, r"shared-memory buffer \((\d+) KiB a group\).{0,300}?and (\d+) of the (\d+) "
                             r"remain in use")
    assert s_regs + p_regs + acc == three == of and s_regs + acc == in_use and kib * 1024 == 64 * 128 * 2
    assert fg.THREE_128.p_bufs and fg.THREE_128.num_consumers == 3  # (its row sums per thread came after run s16/b)
    runs = {r: load(f"{S16}/{r}/{name}.json") for r, name in (("a", "psmem"), ("b", "b1"))}
    assert all(doc["device"] == "NVIDIA H200" and doc["rounds"] == 3 for doc in runs.values())

    def tflops(run, D, T, causal, variant):
        (rec,) = [r for r in runs[run]["records"] if (r["D"], r["T"], r["causal"]) == (D, T, causal)
                  and r["variant"].endswith(variant)]
        return round(rec["tflops"])
    three_t, two_t = quoted(ch, r"no mask; the fast reference took turns then\): (\d+) against (\d+) TFLOP/s")
    assert (three_t, two_t) == (tflops("b", 128, 4096, False, fg.THREE_128._replace(lazy_sum=False).name()),
                                tflops("b", 128, 4096, False, fg.PINGPONG_128.name()))
    three_s, two_s, three_l, two_l, three_8, two_8 = quoted(
        ch, r"\(without the mask: at \$T = 1024\$, (\d+) against (\d+), run `benchmarks/gpu_2026-11-28_s16/a`; at "
        r"\$T = 4096\$,\s+(\d+) against (\d+)\); from \$T = 8192\$ they led \(with the mask, (\d+) against (\d+), "
        r"run `b`\)")
    assert (three_s, two_s, three_l, two_l) == tuple(tflops("a", 64, T, False, cfg.name()) for T in (1024, 4096)
                                                    for cfg in (fg.THREE_64, fg.CONFIGS[64]))
    assert (three_8, two_8) == tuple(tflops("b", 64, 8192, True, cfg.name()) for cfg in (fg.THREE_64, fg.CONFIGS[64]))
    # "turns read within 3% of the same kernel without them": run b's second process against the first and run a
    (within,) = quoted(ch, r"With three groups \(below\) turns read within (\d+)% of the same kernel")
    pp = [r for r in load(f"{S16}/b/b2.json")["records"] if "-pp-" in r["variant"] and r.get("tflops")]
    assert len(pp) >= 6
    for r in pp:
        plain = r["variant"].replace("-pp", "")
        base = [tflops(run, r["D"], r["T"], r["causal"], plain) for run in ("b", "a")
                if any((x["D"], x["T"], x["causal"]) == (r["D"], r["T"], r["causal"]) and x["variant"].endswith(plain)
                       and x.get("tflops") for x in runs[run]["records"])]
        assert base and abs(r["tflops"] / base[0] - 1) < within / 100, (r["variant"], r["T"], r["tflops"], base)


def _sweep_tflops(doc, D, T, causal, variant) -> int:
    """TFLOP/s of one variant (its name's end) on one shape in an attention_gluon_check.py --psmem run of 3 rounds."""
    (rec,) = [r for r in doc["records"] if (r["D"], r["T"], r["causal"]) == (D, T, causal)
              and r["variant"].endswith(variant)]
    assert len(rec["ms_rounds"]) == 3
    return round(rec["tflops"])


def test_ch04_row_sums_added_once():
    """Chapter 4's point on row sums kept per thread: the measurements (run s18/e, attention_gluon_check.py --psmem
    --sweep LAZY_SUM_SWEEP, medians of 3 interleaved rounds, H200) and where the kernel takes them."""
    from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg
    doc = load(f"{S18}/e/lazy.json")
    assert doc["device"] == H200 and doc["rounds"] == 3 and doc["sweep"] == "LAZY_SUM_SWEEP"

    def tflops(D, T, causal, variant):
        return _sweep_tflops(doc, D, T, causal, variant)
    eager128, eager_three = fg.PERSIST_128._replace(lazy_sum=False), fg.THREE_128._replace(lazy_sum=False)
    a1, b1, a4, b4, a64, b64 = quoted(
        "ch04_flash_attention", r"run `benchmarks/gpu_2026-11-28_s18/e`\): (\d+) against (\d+) TFLOP/s at \$T = 1024\$"
        r"\s+without the mask, (\d+) against (\d+) at \$T = 4096\$ with it\. At \$D = 64\$ it did not help on its own "
        r"\(with the mask\s+at \$T = 4096\$ it lost: (\d+) against (\d+)\)")
    assert (a1, b1) == (tflops(128, 1024, False, fg.PERSIST_128.name()), tflops(128, 1024, False, eager128.name()))
    assert (a4, b4) == (tflops(128, 4096, True, fg.THREE_128.name()), tflops(128, 4096, True, eager_three.name()))
    assert (a64, b64) == (tflops(64, 4096, True, fg.CONFIGS[64]._replace(lazy_sum=True).name()),
                          tflops(64, 4096, True, fg.CONFIGS[64].name()))
    assert a1 > b1 and a4 > b4 and a64 < b64
    assert fg.choose(128, 1024, False).lazy_sum and fg.choose(128, 4096, True).lazy_sum
    assert not any(fg.choose(64, T, True).lazy_sum for T in (1024, 4096, 16384))  # the mask: not at D 64
    assert [fg.choose(64, T, False).lazy_sum for T in (1024, 1920, 2048, 16384)] == [False, False, True, True]


def test_ch04_sharing_the_work_out():
    """Chapter 4's point on the balanced schedule: the count (512 pairs on 132 SMs) and the measurements (run s19/b,
    two processes of attention_gluon_check.py --psmem --sweep BALANCED_SWEEP, medians of 3 interleaved rounds each)."""
    from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg
    ch = "ch04_flash_attention"
    pairs, q, sms, r, busy, few, per = quoted(
        ch, r"tiles a head, 4 pairs a head, (\d+) pairs; and\s+\$\d+ = (\d+) \\cdot (\d+) \+ (\d+)\$, so (\d+) blocks "
        r"run four pairs and (\d+) run three\. .{0,120}?where \$\d+ / \d+ = ([\d.]+)\$")
    assert pairs == 4 * 32 * (1024 // 128 // 2) and (q, r) == divmod(pairs, sms) and sms == 132
    assert (busy, few) == (r, sms - r) and per == round(pairs / sms, 2)
    docs = [load(f"{S19}/b/b{n}.json") for n in (1, 2)]
    assert all(d["device"] == H200 and d["rounds"] == 3 and d["sweep"] == "BALANCED_SWEEP" for d in docs)

    def both(D, T, cfg):
        return [_sweep_tflops(d, D, T, True, cfg.name()) for d in docs]
    c64 = fg.CONFIGS[64]
    nums = quoted(ch, r"run `benchmarks/gpu_2026-11-29_s19/b`, two processes\): (\d+) and (\d+) against\s+(\d+) and "
                  r"(\d+) TFLOP/s at \$T = 1024\$, (\d+) and (\d+) against (\d+) and (\d+) at \$T = 2048\$, (\d+) and "
                  r"(\d+) against\s+(\d+) and (\d+) at \$T = 4096\$")
    want = []
    for T in (1024, 2048, 4096):
        want += both(64, T, c64._replace(balanced="lpt")) + both(64, T, c64)
    assert list(nums) == want
    dt = quoted(ch, r"The same shares, each block running its tiles longest first: (\d+)\s+and (\d+)\. The pairs' "
                r"whole rounds as before, with only the last, unfinished round's tiles shared out longest\s+first "
                r"\(at this length that balances the work as well as the first table\): (\d+) and (\d+)\.")
    assert list(dt) == both(64, 1024, c64._replace(balanced="deal")) + both(64, 1024, c64._replace(balanced="tail"))
    l128 = quoted(ch, r"the first table lost \((\d+) and (\d+) against (\d+) and (\d+) at\s+\$T = 1024\$\)")
    assert list(l128) == both(128, 1024, fg.SHORT_128._replace(balanced="lpt")) + both(128, 1024, fg.SHORT_128)
    assert all(a > b for a, b in zip(want[0::4], want[2::4]))  # lpt ahead of the pairs at every T, first process
    assert fg.choose(64, 1024, True).balanced == "lpt" and not fg.choose(128, 1024, True).balanced
    assert fg.choose(64, 8192, True).balanced == "lpt" and not fg.choose(64, 16384, True).balanced


def test_ch04_item_seams():
    """Chapter 4's point on the seams between work items (Config.q_bufs, Config.overlap): the counts and the
    measurements (run s20/b: attention_gluon_check.py --psmem, OVERLAP_SWEEP without the mask, QBUF_SWEEP with it,
    medians of 3 interleaved rounds, H200), and where the kernel takes them."""
    from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg
    ch = "ch04_flash_attention"
    (n8, n128, kib, rows, d) = quoted(
        ch, r"\$1024 / 128 = (\d+)\$ key tiles.{0,700}?once in (\d+) steps.{0,300}?A second query buffer \((\d+) KiB: "
        r"\$2 \\cdot (\d+)\$ rows of \$D = (\d+)\$")
    assert (n8, n128) == (1024 // 128, 16384 // 128) and kib * 1024 == 2 * rows * d * 2
    seam = fg.SEAM_64
    assert fg.smem_bytes(seam, 64) - fg.smem_bytes(seam._replace(q_bufs=1), 64) == kib * 1024 + 16  # + 2 barriers
    b1, b2 = load(f"{S20}/b/b1.json"), load(f"{S20}/b/b2.json")
    assert b1["device"] == b2["device"] == H200 and (b1["sweep"], b2["sweep"]) == ("OVERLAP_SWEEP", "QBUF_SWEEP")
    bal = fg.BALANCED_64
    nums = quoted(ch, r"run `benchmarks/gpu_2026-11-29_s20/b`, TFLOP/s\): the table of tiles alone \(one query "
                  r"buffer, plain seam\) (\d+), (\d+), "
                  r"(\d+); with the\s+second buffer (\d+), (\d+), (\d+); with the overlapped seam alone (\d+), (\d+), "
                  r"(\d+) "
                  r".{0,200}?with both (\d+), (\d+),\s+(\d+); the 256-key tiles the fast reference used before \(and "
                  r"then still used above \$T = 2048\$, where the two\s+tie\) (\d+), (\d+), (\d+); cuDNN (\d+), (\d+), "
                  r"(\d+)\.")
    want = []
    for cfg in (bal, bal._replace(q_bufs=2), bal._replace(overlap=True), seam, fg.WIDE_64):
        want += [_sweep_tflops(b1, 64, T, False, ("choose " if cfg == fg.WIDE_64 else "") + cfg.name())
                 for T in (1024, 2048, 4096)]
    want += [_sweep_tflops(b1, 64, T, False, "sdpa cudnn") for T in (1024, 2048, 4096)]
    assert list(nums) == want
    causal = quoted(ch, r"second buffer alone: (\d+), (\d+), (\d+) against (\d+), (\d+), (\d+) with one query "
                    r"buffer \(cuDNN (\d+), (\d+), (\d+)\)")
    want = []
    for variant in (bal._replace(q_bufs=2).name(), "choose " + bal.name(), "sdpa cudnn"):
        want += [_sweep_tflops(b2, 64, T, True, variant) for T in (1024, 2048, 4096)]
    assert list(causal) == want
    # the debugging run: with the mask, overlap and two buffers, only the second query tile's rows were wrong
    debug = load(f"{S20}/b/debug.txt")
    for case in re.findall(r"== q2ov (\d+) \d+[^\n]*\n[^\n]*\n((?:head[^\n]*\n)+)", debug):
        for line in case[1].splitlines():
            errs = [float(x) for x in line.split()[2:]]
            assert [i for i, e in enumerate(errs) if e > 0.05] == [2, 3], line  # 64-row blocks 2 and 3: tile 1
    for case in ("q1ov 256 1", "q2 256 1"):  # overlap alone and two buffers alone: every block right
        (errs, ) = re.findall(rf"== {case}\n[^\n]*\nhead 0 ([^\n]*)\n", debug)
        assert max(float(x) for x in errs.split()) < 0.05, case
    assert fg.choose(64, 1024, False) == fg.choose(64, 1024, True) == seam._replace(pin=True)  # (test_ch04_pin)
    assert seam.q_bufs == 2 and seam.overlap
    # D 128: P in registers makes room for the second query buffer (run s20/d, first process)
    (q128, reg1, reg2, old1, old2, cud1, cud2, ov1, ov2) = quoted(
        ch, r"no room left for a second\s+query buffer \((\d+) KiB there\).{0,150}?that reached (\d+) and (\d+) "
        r"TFLOP/s at \$T = 1024\$ and 2048, against (\d+) and (\d+) for the\s+configs used before and (\d+) and (\d+) "
        r"for cuDNN \(run `benchmarks/gpu_2026-11-29_s20/d`, first of two\s+processes\); the overlapped seam lost "
        r"there \((\d+) and (\d+)\)")
    reg = fg.REG_128
    assert q128 * 1024 == reg.BLOCK_M * 128 * 2 and reg.p_bufs == 0 and reg.q_bufs == 2
    assert fg.smem_bytes(fg.PERSIST_128._replace(q_bufs=2), 128) > fg.SMEM_LIMIT >= fg.smem_bytes(reg, 128)
    d1 = load(f"{S20}/d/d1.json")
    assert d1["device"] == H200 and d1["sweep"] == "SEAM_SWEEP"
    assert [reg1, reg2] == [_sweep_tflops(d1, 128, T, False, reg.name()) for T in (1024, 2048)]
    assert [old1, old2] == [_sweep_tflops(d1, 128, 1024, False, "choose " + fg.PERSIST_128.name()),
                            _sweep_tflops(d1, 128, 2048, False, "choose " + fg.THREE_128.name())]
    assert [cud1, cud2] == [_sweep_tflops(d1, 128, T, False, "sdpa cudnn") for T in (1024, 2048)]
    assert [ov1, ov2] == [_sweep_tflops(d1, 128, T, False, reg._replace(overlap=True).name()) for T in (1024, 2048)]
    assert fg.choose(128, 1024, False) == fg.choose(128, 2048, False) == reg
    # D 64: row sums per thread on top of the seams (run s21/b first process, s21/a for T 1024)
    (ls2, s2, c2, ls4, w4, c4, ls8, w8, c8, ls1, s1) = quoted(
        ch, r"without the mask \(run\s+`benchmarks/gpu_2026-11-29_s21/b`, first of two processes\): (\d+) against "
        r"(\d+) TFLOP/s for the two changes alone at\s+\$T = 2048\$ \(cuDNN (\d+)\), (\d+) against (\d+) for the "
        r"256-key tiles at \$T = 4096\$ \(cuDNN (\d+)\), (\d+) against (\d+) for the\s+256-key tiles at \$T = 8192\$ "
        r"\(cuDNN (\d+)\); at \$T = 1024\$ they lost, (\d+) against (\d+) \(run\s+"
        r"`benchmarks/gpu_2026-11-29_s21/a`\)")
    ls = fg.SEAM_LS_64
    assert ls.lazy_sum and ls.q_bufs == 2 and ls.overlap and (ls.BLOCK_N, ls.num_stages) == (128, 3)
    s21b, s21a = load(f"{S21}/b/b1.json"), load(f"{S21}/a/a1.json")
    assert s21b["device"] == s21a["device"] == H200 and (s21b["sweep"], s21a["sweep"]) == ("SEAM_LS_SWEEP",
                                                                                          "SEAM_MORE_SWEEP")
    wide = "choose " + fg.WIDE_64.name()  # choose()'s config when run b timed it
    assert [ls2, s2, c2, ls4, w4, c4, ls8, w8, c8] == [
        _sweep_tflops(s21b, 64, T, False, v) for T, others in ((2048, "choose " + seam.name()), (4096, wide),
                                                               (8192, wide))
        for v in (ls.name(), others, "sdpa cudnn")]
    assert [ls1, s1] == [_sweep_tflops(s21a, 64, 1024, False, v) for v in (ls.name(), "choose " + seam.name())]
    assert ls1 < s1 and ls2 > s2 and ls4 > w4 and ls8 > w8
    assert fg.choose(64, 1024, False)._replace(pin=False) == seam  # (the pin: test_ch04_pin)
    assert fg.choose(64, 2048, False)._replace(pin=False) == fg.choose(64, 8192, False) == ls



def test_ch04_split_last_round():
    """Chapter 4's note on splitting the last round (stream-K): the round arithmetic, and the probe's numbers (run
    s21/f2, benchmarks/gpu_2026-11-29_s21/split_probe.py, medians of 3 interleaved rounds, H200)."""
    import statistics
    ch = "ch04_flash_attention"
    (tiles, sms, whole, left, rounds, mean, tiles1, whole1, left1, rounds1, mean1) = quoted(
        ch, r"\$4 \\cdot 32 \\cdot 2048 / 128 = (\d+)\$ tiles go to the (\d+) looping\s+blocks in rounds: "
        r"\$\d+ = (\d+) \\cdot \d+ \+ (\d+)\$, so \d+ blocks run (\d+) tiles and \d+ run \d+, and the kernel lasts "
        r"\d+ tiles\s+where \$\d+ / \d+ = ([\d.]+)\$ would do, about 3% of its time \(at \$T = 1024\$: "
        r"\$(\d+) = (\d+) \\cdot \d+ \+ (\d+)\$, (\d+) for ([\d.]+), the")
    assert (tiles, sms, tiles1) == (4 * 32 * 2048 // 128, 132, 4 * 32 * 1024 // 128)
    assert divmod(tiles, sms) == (whole, left) and rounds == whole + 1 and mean == round(tiles / sms, 2)
    assert divmod(tiles1, sms) == (whole1, left1) and rounds1 == whole1 + 1 and mean1 == round(tiles1 / sms, 2)
    assert round(100 * (1 - mean / rounds)) == round(100 * (1 - mean1 / rounds1)) == 3
    last, per = quoted(ch, r"the\s+\$68 \\cdot 16 = (\d+)\$ key tiles of the last round go to the 132 blocks as "
                       r"evenly as they can, (\d+) or \d+ each")
    assert last == 68 * 16 and per == last // 132
    probe = load(f"{S21}/f2/probe.json")
    assert probe["device"] == H200
    med = {(r["T"], r["kind"]): round(statistics.median(r["tflops_rounds"])) for r in probe["rows"]}
    s1, w1, s2, w2, f1, f2 = quoted(ch, r"\(run `benchmarks/gpu_2026-11-29_s21/f2`, one process, TFLOP/s\):\s+"
                                    r"(\d+) against (\d+) at \$T = 1024\$ and (\d+) against (\d+) at \$T = 2048\$\."
                                    r".{0,150}?read (\d+) and (\d+)")
    assert [s1, w1, s2, w2, f1, f2] == [med[(1024, "split")], med[(1024, "whole")], med[(2048, "split")],
                                        med[(2048, "whole")], med[(1024, "splitfmt")], med[(2048, "splitfmt")]]
    assert s1 < w1 and s2 < w2 and f1 < w1 and f2 < w2


def test_ch04_config_table():
    """Chapter 4's table of which config the fast reference runs where, row by row against choose() at lengths
    each row names (T's that are multiples of 128 or of 64, as the kernel takes)."""
    from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg
    text = load("source/ch04_flash_attention/ch04_flash_attention.nb.md")
    rows = re.findall(r"^\| (64|128) \| (no|yes|either) \| ([^|]+) \| (\d) \((\d+)\) \| (\d+) \| (\d) \| (registers|"
                      r"shared memory) \| (yes|no) \| (every tile|once) \| ([^|]+) \| (1|2|2, seams overlapped) \| "
                      r"(yes|no) \|$", text, re.M)
    report = [1024, 2048, 4096, 8192, 16384]
    lengths = {"below 2048": [128, 256, 384, 1024, 1152, 1920], "from 2048, below 4096": [2048, 2176, 3968],
               "from 4096": [4096, 4224, 8192, 16384], "below 16384": [128, 1024, 2048, 4096, 8192, 12288],
               "from 16384": [16384], "up to 1024": [512, 1024], "up to 2048": [1024, 2048],
               "above 1024, up to 2048": [1152, 2048], "longer": report}
    assert len(rows) == 9
    covered = set()
    for D, mask, when, groups, bm, bn, stages, p, loop, sums, shared, q_bufs, pin in rows:
        for causal in {"no": [False], "yes": [True], "either": [False, True]}[mask]:
            for T in lengths[when.strip()]:
                if when.strip() == "longer" and T <= 2048:  # the rows above
                    continue
                cfg = fg.choose(int(D), T, causal)
                covered.add((int(D), causal, T))
                assert (cfg.num_consumers, cfg.BLOCK_M, cfg.BLOCK_N, cfg.num_stages) == (
                    int(groups), int(bm), int(bn), int(stages)), (D, T, causal)
                assert ("shared memory" if cfg.p_bufs else "registers") == p and cfg.persistent == (loop == "yes")
                assert ("once" if cfg.lazy_sum else "every tile") == sums
                want = ("longest first" if cfg.balanced == "lpt" else "in pairs") if cfg.persistent else "by the GPU"
                assert want == shared.strip(), (D, T, causal, shared)
                assert q_bufs == f"{cfg.q_bufs}" + (", seams overlapped" if cfg.overlap and not causal else "")
                assert cfg.pin == (pin == "yes"), (D, T, causal)
    # every shape of the report falls in a row; the note under the table: other lengths at D 128 with the mask
    assert {(D, c, T) for D in (64, 128) for c in (False, True) for T in (1024, 2048, 4096, 8192, 16384)} <= covered
    assert "a length above 1024 that is no multiple of 128 takes the row of the shorter ones" in text
    assert fg.choose(128, 1088, True) == fg.choose(128, 1024, True) and fg.choose(128, 1088, True).BLOCK_N == 64


def test_ch04_pin():
    """Chapter 4's point on keeping the softmax beside its own P V (Config.pin): the count of exponentials and the
    measurements (run s22/c: attention_gluon_check.py --psmem --sweep PIN_SWEEP, one process, medians of 3
    interleaved rounds, H200; s23/a for the 128-key tiles with and without it side by side, --sweep PIN_OFF_SWEEP),
    and where choose() takes it. (The machine code's
    count itself: tests/test_attention_gluon.py::test_pin_keeps_the_exponentials_beside_the_p_v.)"""
    from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg
    ch = "ch04_flash_attention"
    threads, per, extra, total = quoted(ch, r"gives each of a group's (\d+) threads\s+\$64 \\cdot 128 / 128 = (\d+)\$ "
                                        r"of them, and (\d+) more for the factors \$\\alpha\$ of its two rows\. We "
                                        r"found 0 of the (\d+)")
    rows_a_thread = 64 // 4 // 8  # a group's 64 rows over its 4 warps, 16 a warp, each row in 4 of a warp's 32 lanes
    assert per == 64 * 128 // threads and extra == rows_a_thread == 2 and total == per + extra
    c1 = load(f"{S22}/c/c1.json")
    assert c1["device"] == H200 and c1["sweep"] == "PIN_SWEEP" and c1["rounds"] == 3
    nums = quoted(ch, r"\(run\s+`benchmarks/gpu_2026-11-29_s22/c`, TFLOP/s, against the fast reference\s+without it\): "
                  r"at \$D = 64\$ with the mask (\d+) against (\d+) at \$T = 1024\$, (\d+) against (\d+) at "
                  r"\$T = 2048\$, (\d+)\s+against (\d+) at \$T = 4096\$, and (\d+) against the three groups' (\d+) "
                  r"at \$T = 8192\$ \(cuDNN (\d+), (\d+), (\d+), (\d+)\);\s+without the mask (\d+) against (\d+) at "
                  r"\$T = 1024\$ and, with the row sums kept per thread, (\d+) against (\d+) at\s+\$T = 2048\$\. "
                  r"It lost without the mask from \$T = 4096\$ \((\d+) against (\d+)\), with the mask at "
                  r"\$T = 16\\,384\$ \((\d+)\s+against the three groups' (\d+)\), and it was level or lower at "
                  r"\$D = 128\$ \((\d+) against (\d+) at \$T = 1024\$ without\s+the mask\)\..{0,400}?the looping "
                  r"kernel with 128-key tiles and two query\s+buffers, with the pin, read (\d+) against (\d+) for the "
                  r"64-key tiles used there before\. That gain is the tiles',\s+not the pin's: timed side by side "
                  r"later \(run `benchmarks/gpu_2026-11-29_s23/a`\), the same kernel read (\d+)\s+without the pin "
                  r"and (\d+) with it, the 64-key tiles (\d+) and cuDNN (\d+), so the fast reference takes it "
                  r"there\s+without the pin\.")

    def t(D, T, causal, v, doc=c1):
        return _sweep_tflops(doc, D, T, causal, v)
    seam, ls, three, reg, short = fg.SEAM_64, fg.SEAM_LS_64, fg.THREE_64, fg.REG_128, fg.SHORT_128
    pin = lambda c: c._replace(pin=True).name()  # noqa: E731
    want = []
    for T, base in ((1024, seam), (2048, seam), (4096, seam), (8192, three)):
        want += [t(64, T, True, pin(seam)), t(64, T, True, "choose " + base.name())]
    want += [t(64, T, True, "sdpa cudnn") for T in (1024, 2048, 4096, 8192)]
    want += [t(64, 1024, False, pin(seam)), t(64, 1024, False, "choose " + seam.name()),
             t(64, 2048, False, pin(ls)), t(64, 2048, False, "choose " + ls.name()),
             t(64, 4096, False, pin(ls)), t(64, 4096, False, "choose " + ls.name()),
             t(64, 16384, True, pin(seam)), t(64, 16384, True, "choose " + three.name()),
             t(128, 1024, False, pin(reg)), t(128, 1024, False, "choose " + reg.name()),
             t(128, 2048, True, pin(reg)), t(128, 2048, True, "choose " + short.name())]
    a1 = load(f"{S23}/a/a1.json")
    assert a1["device"] == H200 and a1["sweep"] == "PIN_OFF_SWEEP" and a1["rounds"] == 3
    want += [t(128, 2048, True, reg.name(), a1), t(128, 2048, True, "choose " + pin(reg), a1),
             t(128, 2048, True, short.name(), a1), t(128, 2048, True, "sdpa cudnn", a1)]
    assert list(nums) == want
    assert want[-4] > max(want[-3], want[-2])  # without the pin the fastest there: choose() takes it
    # D 64: choose() pins exactly where, in run c, the pinned config read more than 1% above choose()'s config then
    # (SEAM_64 with the mask, SEAM_LS_64 without it; THREE_64 with the mask from T 8192)
    for T in (1024, 2048, 4096, 8192, 16384):
        for causal in (False, True):
            then = seam if causal and T < 8192 else three if causal else seam if T < 2048 else ls
            pinned = seam if causal else then
            ahead = t(64, T, causal, pin(pinned)) > 1.01 * t(64, T, causal, "choose " + then.name())
            assert fg.choose(64, T, causal).pin == ahead, (T, causal)
            assert fg.choose(64, T, causal) == (pinned._replace(pin=True) if ahead else then), (T, causal)
    # D 128: nowhere (causal T 2048 took it until run s23/a timed REG_128 without it faster there)
    assert not any(fg.choose(128, T, c).pin for T in (1024, 2048, 4096, 16384) for c in (False, True))
    assert fg.choose(128, 2048, True) == reg
    assert "](../../course/diagrams/wait_placement.png)" in load(f"source/{ch}/{ch}.nb.md")


def test_ch04_wider_key_tiles():
    """Chapter 4's point on 256-key tiles at D 64: the register and shared-memory arithmetic (against the kernel's own
    config and count) and the measurements (run s17/a, attention_gluon_check.py --psmem --sweep SHORT_SWEEP, medians
    of 3 interleaved rounds, H200)."""
    from kernels_ref.ch04_flash_attention import flash_attention_gluon as fg
    ch = "ch04_flash_attention"
    w = fg.WIDE_64
    (s_regs, p_regs, acc, total, left) = quoted(
        ch, r"such a tile are \$64 \\cdot 256 / 128 = (\d+)\$ registers a thread; with \$P\$ \((\d+) more\) and the "
        r"accumulator\s+\(\$64 \\cdot 64 / 128 = (\d+)\$\) that is (\d+) of the 240.{0,200}?and (\d+) remain in use")
    m_wg = w.BLOCK_M // w.num_consumers
    assert (s_regs, p_regs, acc) == (m_wg * w.BLOCK_N // 128, m_wg * w.BLOCK_N // 2 // 128, m_wg * 64 // 128)
    assert total == s_regs + p_regs + acc and left == s_regs + acc and fg.consumer_regs(w) == 240
    p_kib, ring, p_all, q_o, used, limit = quoted(
        ch, r"here too \(([\d]+) KiB a group\).{0,200}?= (\d+) KiB\), \$P\$'s buffers \((\d+) KiB\), the query tiles "
        r"and the looping kernel's output buffer \((\d+) KiB each\):\s+(\d+) of the (\d+) KiB")
    assert p_kib * 1024 == m_wg * w.BLOCK_N * 2 and p_all == p_kib * w.num_consumers
    assert ring * 1024 == w.num_stages * 2 * w.BLOCK_N * 64 * 2 and q_o * 1024 == w.BLOCK_M * 64 * 2
    assert used == ring + p_all + 2 * q_o == fg.smem_bytes(w, 64) // 1024 and limit * 1024 == fg.SMEM_LIMIT
    assert fg.smem_bytes(w._replace(num_stages=3), 64) > fg.SMEM_LIMIT  # "cannot have a third stage"
    doc = load(f"{S17}/a/short.json")
    assert doc["device"] == H200 and doc["rounds"] == 3 and doc["sweep"] == "SHORT_SWEEP"

    def tflops(D, T, causal, variant):
        return _sweep_tflops(doc, D, T, causal, variant)
    n4, o4, n2, o2 = quoted(ch, r"run `benchmarks/gpu_2026-11-28_s17/a`\): (\d+)\s+against (\d+) TFLOP/s at \$T = "
                            r"4096\$, (\d+) against (\d+) at \$T = 2048\$")
    assert (n4, o4, n2, o2) == (tflops(64, 4096, False, w.name()), tflops(64, 4096, False, fg.CONFIGS[64].name()),
                                tflops(64, 2048, False, w.name()), tflops(64, 2048, False, fg.CONFIGS[64].name()))
    nc, oc = quoted(ch, r"With the mask it lost everywhere \(at\s+\$T = 4096\$, (\d+) against (\d+)\)")
    assert (nc, oc) == (tflops(64, 4096, True, w.name()), tflops(64, 4096, True, fg.CONFIGS[64].name()))
    assert all(tflops(64, T, True, w.name()) < tflops(64, T, True, fg.CONFIGS[64].name()) for T in (1024, 2048, 4096))
    p128, s128 = quoted(ch, r"128-key tiles: (\d+) against (\d+) TFLOP/s for the config the fast "
                        r"reference took there before")
    persist = fg.PERSIST_128._replace(lazy_sum=False)  # as run s17/a timed it (row sums per thread came after: s18/e)
    assert (p128, s128) == (tflops(128, 1024, False, persist.name()), tflops(128, 1024, False, fg.SHORT_128.name()))


def test_ch04_pingpong_gains():
    """Chapter 4's ping-pong sentence against the two check runs (attention_gluon_check.py --pingpong)."""
    lo, hi = quoted("ch04_flash_attention",
                    r"it gained (\d+) to (\d+)% at \$T\$ = 2048 and 4096 on\s+an H100 and an H200")
    (worst,) = quoted("ch04_flash_attention", r"turns gained nothing or\s+lost up to (\d+)%")
    gains, others = [], []
    for run, gpu in (("e", "H200"), ("g", "H100")):
        assert gpu in load(f"benchmarks/gpu_2026-11-27_s11/{run}/gpu.txt")
        log = load(f"benchmarks/gpu_2026-11-27_s11/{run}/pp.log")
        for D, T, causal, cfg, ratio in re.findall(r"D=(\d+) T=(\d+) causal=(\w+): (\S+) pingpong/choose ([\d.]+)",
                                                   log):
            if D == "128" and causal == "False" and not cfg.endswith("-p") and T in ("2048", "4096"):
                gains.append(float(ratio))
            else:
                others.append(float(ratio))
    assert len(gains) == 4 and (round(100 * (min(gains) - 1)), round(100 * (max(gains) - 1))) == (lo, hi)
    assert max(others) < 1.01 and round(100 * (1 - min(others))) == worst


def test_ch05_measured_fractions():
    two, welford = quoted("ch05_fused_norms", r"measured ([\d.]+)% of the copy bandwidth against ([\d.]+)% "
                          r"with the update \(H200, 2026-11-22, 16 384 × 4096\)")
    ref = _bench("benchmarks/ch05_bench_h200.json", "ch05.layernorm_cuda", [16384, 4096], "reference")
    assert ref["device"] == "NVIDIA H200" and round(100 * ref["fraction"], 1) == two
    row = _benchmarks_md_row("| LayerNorm, CUDA reference (fp32; Welford's update per value)", H200_CH5)
    assert row.split("|")[2].strip() == f"{welford}%"  # the 16384 x 4096 column
    vec, scalar = quoted("ch05_fused_norms", r"the reference read ([\d.]+)% of the copy bandwidth and a version "
                         r"with 2-byte loads ([\d.]+)%")
    h100 = "benchmarks/ch05_bench_h100.json"
    assert round(100 * _bench(h100, "ch05.rmsnorm_vec_cuda", [16384, 4096], "reference")["fraction"], 1) == vec
    assert round(100 * _bench(h100, "ch05.rmsnorm_vec_cuda", [16384, 4096],
                              "wrong/rmsnorm_vec_scalar_loads")["fraction"], 1) == scalar


# ---------------------------------------------------------------- derived and computed numbers

def test_ch05_datasheet_arithmetic():
    bw, flops = 3.35e12, 67e12
    (billions,) = quoted("ch05_fused_norms", r"4 \\approx (\d+)\$ billion elements a second")
    assert abs(bw / 4 / 1e9 - billions) <= 5
    assert "$67 / 3.35 = 20$" in flat("ch05_fused_norms") and round(flops / bw) == 20
    a, b = quoted("ch05_fused_norms", r"\$(\d+)/(\d+) \\approx 2.3\$ times fewer bytes")
    assert (a, b) == (2 + 2 + 2 + 2 + 2 + 2 + 2 + 2 + 2 + 2 + 1, 2 + 2 + 2 + 2 + 1)  # 10 trips + q; g, u, r, h, q
    assert round(a / b, 1) == 2.3


def test_ch05_variance_cancellation_as_the_cell_computes_it():
    (measured,) = quoted("ch05_fused_norms",
                         r"the cell below measures (\d+) for a row of 4096 values with mean \$10\^4\$")
    rng = np.random.default_rng(0)
    for mu in 10.0 ** np.arange(0, 5):  # the cell's loop, up to the row it quotes
        x = (mu + rng.standard_normal(4096)).astype(np.float32)
    exact = np.var(x.astype(np.float64))
    s, s2 = np.float32(0), np.float32(0)
    for v in x:
        s += v
        s2 += v * v
    naive = s2 / np.float32(len(x)) - (s / np.float32(len(x))) ** 2
    assert round(abs(float(naive) - exact) / exact) == measured
    (eps,) = quoted("ch05_fused_norms", r"\\approx ([\d.]+) \\times 10\^\{-6\} \\quad \(n = 4096\)")
    assert round(math.sqrt(4096) * 2.0**-24 / 3 * 1e6, 1) == eps


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


def test_ch05_double_rounding_as_the_cell_computes_it():
    pytest.importorskip("torch")
    once_mean, twice_mean = quoted("ch05_fused_norms", r"the mean error grows from ([\d.]+) to ([\d.]+) ulp, "
                                   r"as the cell prints")
    (worst,) = quoted("ch05_fused_norms", r"\(up to ([\d.]+) ulp\), and the mean error")
    printed = _run_cell("ch05_fused_norms", "torch.manual_seed(0)\nx = torch.randn(512, 4096)")
    stats = {m.group(1): [float(g) for g in m.groups()[1:]] for m in re.finditer(
        r"(round \w+), γ ≈ \d+: mean \|error\| ([\d.]+) ulp, largest ([\d.]+), (\d+)% beyond half an ulp, "
        r"mean signed error ([-+\d.]+)", printed)}
    assert stats["round once"][0] == once_mean and stats["round twice"][0] == twice_mean
    assert stats["round twice"][1] == worst and stats["round once"][1] <= 0.5
    assert 20 <= stats["round twice"][2] <= 30  # "about a quarter"
    assert abs(stats["round twice"][3]) < 1e-3  # unbiased: no drift of the mean


def test_ch03_half_precision_error_levels():
    torch = pytest.importorskip("torch")
    sci = r"\$(\d+(?:\.\d+)?) \\times 10\^\{(-\d+)\}\$"
    levels = quoted("ch03_online_softmax", rf"gives {sci} to {sci} for `float16`, {sci} to {sci} for `bfloat16` "
                    rf"and {sci} to {sci} for `float32`")
    bounds = [levels[i] * 10 ** levels[i + 1] for i in range(0, 12, 2)]
    torch.manual_seed(0)
    errors = {torch.float16: [], torch.bfloat16: [], torch.float32: []}
    for n in (256, 1024, 4096, 16384, 65536):
        x = 3 * torch.randn(64, n)
        exact = torch.softmax(x.double(), -1)
        for dt, out in errors.items():
            out.append((torch.softmax(x.to(dt).float(), -1).to(dt).double() - exact).abs().max().item())
    for (lo, hi), errs in zip(zip(bounds[0::2], bounds[1::2]), errors.values()):
        assert lo * 0.6 <= min(errs) and max(errs) <= hi * 1.6, (lo, hi, errs)  # orders of magnitude


def test_ch02_equal_terms_example():
    (got,) = quoted("ch02_reductions", r"which gives ([\d.]+) instead of 5000")
    s = np.cumsum(np.full(50_000, np.float32(0.1)), dtype=np.float32)[-1]
    assert round(float(s), 2) == got


def test_ch02_bank_conflict_claims():
    """The text's claims, counted the way the chapter's cell counts them."""
    def degree(words):
        banks: dict[int, set] = {}
        for w in words:
            banks.setdefault(w % 32, set()).add(w)
        return max((len(v) for v in banks.values()), default=0)

    def worst(n, s, active, word):
        return max(max(degree([word(t) for t in range(w, w + 32) if active(t)]),
                       degree([word(t) + s for t in range(w, w + 32) if active(t)])) for w in range(0, n, 32))

    for s in (1, 2, 4, 8, 16, 32, 64, 128):  # interleaved: divergence, never a conflict
        assert worst(256, s, lambda t: t % (2 * s) == 0, lambda t: t) <= 1
    assert worst(256, 1, lambda t: 2 * t < 256, lambda t: 2 * t) == 2     # strided: 2-way at s = 1
    assert worst(256, 2, lambda t: 4 * t < 256, lambda t: 4 * t) == 4     # 4-way at s = 2
    assert worst(1024, 16, lambda t: 32 * t < 1024, lambda t: 32 * t) == 32  # 32-way at s = 16, 1024 threads
    body = flat("ch02_reductions")
    assert "**no** bank conflict, only divergence" in body and "32-way at `s = 16`" in body


def test_student_pack_ships_the_glossary_and_the_diagrams():
    from autograder.student_pack import files_under

    shipped = set(files_under("course"))
    assert "course/GLOSSARY.md" in shipped
    for png in os.listdir(DIAGRAMS):
        if png.endswith(".png"):
            assert f"course/diagrams/{png}" in shipped, f"course/diagrams/{png}: commit it (the pack ships git files)"


def test_ch06_cross_entropy_in_place_measured():
    a_in, a_in2, a_out, a_out2, b_in, b_in2, b_out = quoted(
        "ch06_low_precision", r"measured ([\d.]+)-([\d.]+)% of copy in place and ([\d.]+)-([\d.]+)% out of place at "
        r"2048 × 131 072, and ([\d.]+)-([\d.]+)% and ([\d.]+)% at 1024 × 262 144")
    got: dict = {}
    for k in (1, 2):
        sweep = load(f"benchmarks/gpu_2026-11-26_s9/k/softmax_long_rows_sweep_{k}.json")
        assert sweep["gpu"] == "NVIDIA H100 80GB HBM3"
        for r in sweep["records"]:
            if r["op"] == "cross_entropy" and r["dtype"] == "bfloat16":
                assert "error" not in r and r["ignored_rows"] == 0  # every row's logits read: the bytes counted
                got.setdefault((tuple(r["shape"]), r["impl"]), []).append(round(r["pct"], 1))
    span = {k: (min(v), max(v)) for k, v in got.items()}
    assert span[((2048, 131072), "ce-fast-default")] == (a_in, a_in2)
    assert span[((2048, 131072), "ce-fast-default-out-of-place")] == (a_out, a_out2)
    assert span[((1024, 262144), "ce-fast-default")] == (b_in, b_in2)
    assert span[((1024, 262144), "ce-fast-default-out-of-place")] == (b_out, b_out)


def test_ch01_eviction_hints_gain_nothing_on_the_graders_clock():
    """Chapter 1's section 5: a kernel that loads the first rows of each input with evict_last gained at most the
    quoted percentage, under 1%, over the reference on the judge's clock (s24/b, judge_probe.py, H200)."""
    gain, = quoted("ch01_softmax", r"On an H200, loading the first rows of each input that way, hoping to find them "
                   r"again in the next round, gained nothing beyond noise on the grader's clock: at most ([\d.]+)% "
                   r"over the same kernel without the hint, run `benchmarks/gpu_2026-11-29_s24/b`")
    assert load("benchmarks/gpu_2026-11-29_s24/b/info.txt").splitlines()[0] == "NVIDIA H200"

    def gbps(run, variant):
        rows = load(f"benchmarks/gpu_2026-11-29_s24/{run}/{run}2.json")["rows"]
        return [float(re.match(r"(\d+) GB/s", r["message"]).group(1)) for r in rows if r["variant"] == variant]
    ref, pinned = gbps("b", "reference"), gbps("b", "evict_last_pin_default")
    assert len(ref) == len(pinned) == 2
    assert round(100 * (max(pinned) / min(ref) - 1), 1) == gain and gain < 1  # "nothing beyond noise"


def test_ch06_hint_table_not_lifted_by_the_old_flush():
    """Chapter 6's note under the cross-entropy hint table: on an H200 every variant read the same with the old
    memset flush and the timer's flush of today, within half a point, at all four shapes (s24/c, ch06_ce_hints.py
    --memset-flush-too)."""
    body = flat("ch06_low_precision")
    assert ("On an H200 that made no difference: every variant of the table's kernel read the same with the old "
            "flush and with the timer's flush of today, within half a point of copy at all four shapes measured (three "
            "`bfloat16`, "
            "one `float32`; run `benchmarks/gpu_2026-11-29_s24/c`). The H100 table itself was not measured "
            "again.") in body
    doc = load("benchmarks/gpu_2026-11-29_s24/c/c1.json")
    assert doc["device"] == "NVIDIA H200"
    shapes = {(tuple(r["shape"]), r["dtype"]) for r in doc["runs"]}
    assert len(shapes) == 4 and sorted(d for _, d in shapes).count("torch.bfloat16") == 3
    diffs = [100 * abs(r["fraction"] - r["fraction_memset_flush"]) for r in doc["runs"]]
    assert len(diffs) == 48 and max(diffs) < 0.5, max(diffs)
    assert any(r["variant"] != "no hints" and "evict_last" in r["variant"] for r in doc["runs"])


S11 = "benchmarks/gpu_2026-11-27_s11"  # the eleventh GPU session: a, b H100 sweeps, c H100 report, d H200 both


S12 = "benchmarks/gpu_2026-11-27_s12"  # the twelfth: b H100 and c H200 cluster sweeps, g H200 and h H100 reports
S13 = "benchmarks/gpu_2026-11-27_s13"  # the thirteenth: a H100 cluster sweep with the guard for large maxima
S15 = "benchmarks/gpu_2026-11-28_s15"  # the fifteenth: s13h an H200 report (s13's run_h.sh, rerun with Liger)
S16 = "benchmarks/gpu_2026-11-28_s16"  # the sixteenth: a, b three consumer groups, P through shared memory
S17 = "benchmarks/gpu_2026-11-28_s17"  # the seventeenth: a, b 256-key tiles (D 64); d the H200 report with them
S18 = "benchmarks/gpu_2026-11-28_s18"  # the eighteenth: e row sums kept per thread (Config.lazy_sum)
S19 = "benchmarks/gpu_2026-11-29_s19"  # the nineteenth: a-c balanced schedules (Config.balanced), d the H200 report
S20 = "benchmarks/gpu_2026-11-29_s20"  # the twentieth: a, b, d the seams (Config.q_bufs, .overlap); c, e H200 reports
S22 = "benchmarks/gpu_2026-11-29_s22"  # the twenty-second: c PIN_SWEEP on every report shape; d report; e report again
S23 = "benchmarks/gpu_2026-11-29_s23"  # the twenty-third: a PIN_OFF_SWEEP; c, e the flush; g1 report, g2 report again
S21 = "benchmarks/gpu_2026-11-29_s21"  # the twenty-first: a, b D 64 sweeps (row sums per thread on the seams); c report
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
    """The records of benchmarks/softmax_cluster_sweep.py's run `run` of the eleventh session, on `gpu`."""
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
    """Every round's % of copy of one impl and config in a cluster sweep: run `run` of `session` (the twelfth's
    unless named), whose gpu.txt (or info.txt's first line) names `gpu`."""
    data = load(f"{session}/{run}/cluster.json")
    named = f"{session}/{run}/gpu.txt" if os.path.exists(os.path.join(ROOT, session, run, "gpu.txt")) else \
        f"{session}/{run}/info.txt"
    assert data["gpu"] == gpu and load(named).splitlines()[0].strip() == gpu
    out = [round(r["pct"], 1) for r in data["records"] if r["impl"] == impl and r["shape"] == shape_dtype[0]
           and r["dtype"] == shape_dtype[1] and r["config"] == config]
    assert len(out) == 2, (run, impl, shape_dtype, config)  # two interleaved rounds
    return out


def _span(values) -> str:
    lo, hi = min(values), max(values)
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def test_ch03_cluster_fewer_instructions():
    """Section 9's SC_FAST paragraphs: the instruction counts (recompiled here: NVRTC, then the cuobjdump the Triton
    package ships), the exponent's error bound (derived), and the sweeps' side-by-side numbers (runs b and c)."""
    import subprocess
    import tempfile

    import triton

    from course import cuda
    from kernels_ref.ch03_online_softmax import softmax_cluster as sc
    ch = "ch03_online_softmax"
    txt = flat(ch)
    # the exponent's error: half an ulp of m log2 e at |m| = 1000, times ln 2
    ml2e = 1000 * math.log2(math.e)
    assert 2**10 <= ml2e < 2**11 and "$[2^{10}, 2^{11})$" in txt and "$2^{-14} \\approx 6.1 \\cdot 10^{-5}$" in txt
    assert round(2.0**-14, 6) == 6.1e-5 and f"${2.0**-14 * math.log(2):.1e}".replace("e-05", " \\cdot 10^{-5}$") in txt
    (measured,) = quoted(ch, r"where it measured\s+\$([\d.]+) \\cdot 10\^\{-6\}\$ in run `b`")
    err = float(re.search(r"AssertionError: max error ([\d.e-]+)", load(f"{S12}/b/pytest.txt")).group(1))
    assert round(err * 1e6, 1) == measured and "float32" in load(f"{S12}/b/pytest.txt")
    # instruction counts, bfloat16 8 x 128 x 16 without and with SC_FAST
    before, after, ex2 = quoted(ch, r"went from (\d+) instructions to\s+(\d+), with the same (\d+) `MUFU.EX2`")
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    if not os.path.exists(tool):
        pytest.skip("no cuobjdump in the Triton package")
    def sass_counts(src):
        cubin, _ = cuda._nvrtc_compile(src, "sm_90")
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(cubin + b"\0")  # cupy's getCUBIN drops the last byte (NOTES.md)
            f.flush()
            sass = subprocess.run([tool, "-sass", f.name], capture_output=True, text=True, check=True).stdout
        lines = re.findall(r"^\s+/\*[0-9a-f]{4}\*/\s+(\S.*?);", sass, re.M)
        return len(lines), sum("MUFU.EX2" in ln for ln in lines)

    def registers(src):
        return cuda.parse_ptxas_report(cuda._nvrtc_compile(src, "sm_90")[1])["softmax_cluster"].registers

    # "as first written": the kernel before the guard for large maxima (commit FIRST_FAST, read from git)
    try:
        first_src = subprocess.run(["git", "show", f"{FIRST_FAST}:kernels_ref/ch03_online_softmax/softmax_cluster.cu"],
                                   cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f"no git history with commit {FIRST_FAST} (the kernel as first written)")
    with tempfile.NamedTemporaryFile("w", suffix=".cu") as f:
        f.write(first_src)
        f.flush()
        old_src, sc.SRC = sc.SRC, f.name
        try:
            first = {(fast, mb): sc.source(True, 8, 128, 16, fast=fast, min_blocks=mb)
                     for fast, mb in ((False, 0), (True, 0), (True, 5))}
        finally:
            sc.SRC = old_src
    assert [sass_counts(first[False, 0]), sass_counts(first[True, 0])] == [(before, ex2), (after, ex2)]
    assert ex2 == 2 * 128 + 8  # two a value, 8 for the merge
    # registers as first written: 92 before, 128 with SC_FAST, 96 when 5 blocks an SM are asked for
    new, first_regs, asked = quoted(ch, r"the compiler gave the new kernel (\d+) a thread where the first had\s+(\d+)"
                                    r"\..*?brought it to (\d+) registers")
    regs = [registers(first[k]) for k in ((False, 0), (True, 0), (True, 5))]
    assert regs == [first_regs, new, asked]
    blocks = [65536 // (128 * (-(-r // 8) * 8)) for r in regs]  # 8 registers a thread at a time
    assert blocks == [5, 4, 5] and "(92 counts as 96)" in txt
    # the kernel as it is, with the guard: both loops compiled, and its registers
    both, mufu, unasked, with5 = quoted(ch, r"compiles both loops, the exact one and the FMA one: (\d+) instructions "
                                            r"and (\d+) `MUFU.EX2`.*?register choice: (\d+) a thread unasked and "
                                            r"(\d+) with `__launch_bounds__\(128, 5\)`")
    now = {mb: sc.source(True, 8, 128, 16, fast=True, min_blocks=mb) for mb in (0, 5)}
    assert sass_counts(now[0]) == (both, mufu) and mufu == 2 * ex2 - 8  # two loops, one merge
    assert [registers(now[0]), registers(now[5])] == [unasked, with5]
    assert {65536 // (128 * (-(-r // 8) * 8)) for r in (unasked, with5)} == {5}
    k16f = {"cluster": 8, "threads": 128, "vec": 16, "fast": True}
    spans = [_span(_rounds("a", H100, "candidate", LONG_BF16, cfg, S13)) for cfg in (k16f, dict(k16f, min_blocks=5))]
    b_mb5 = _span(_rounds("b", H100, "candidate", LONG_BF16, dict(k16f, min_blocks=5)))
    again = _span(_rounds("b", H100, "candidate", LONG_BF16, dict(k16f, min_blocks=5), S13))
    assert (f"they read {spans[0]}% and {spans[1]}%, and the second {again}% in another run the same day (`s13/b`); "
            f"before the guard, run `gpu_2026-11-27_s12/b` had read {b_mb5}% with the attribute") in txt
    # the sweeps
    k16 = {"cluster": 8, "threads": 128, "vec": 16}
    x32 = {"cluster": 8, "threads": 128, "vec": 32, "one_exp": True}
    eight = [dict(cluster=8, threads=256, vec=8, one_exp=True), dict(cluster=8, threads=256, vec=8, one_exp=True,
                                                                      fast=True)]
    same = {"cluster": 8, "threads": 256, "vec": 8, "fast": True}
    assert (f"That lost on an H100: {_span(sum((_rounds('b', H100, 'candidate', LONG_BF16, c) for c in eight), []))}%, "
            f"against {_span(_rounds('b', H100, 'candidate', LONG_BF16, same))}% for the same block shape without it "
            f"and {_span(_rounds('b', H100, 'candidate', LONG_BF16, k16))}% for the kernel of 16 vectors") in txt
    c_bf16 = [_span(_rounds("c", H200, "candidate", LONG_BF16, cfg)) for cfg in
              (k16, dict(k16, fast=True), dict(k16, fast=True, min_blocks=5))]
    assert f"the `bfloat16` shape went from {c_bf16[0]}% to {c_bf16[1]}%." in txt
    assert f"brought it to {asked:.0f} registers and the shape to {c_bf16[2]}%" in txt
    four = _span(_rounds("c", H200, "candidate", LONG_BF16, dict(k16, fast=True, min_blocks=4)))
    assert f"asking for 4, which changes the code but not the number of blocks, read {four}%" in txt
    # the error at |m| = 5e4: half an ulp of m log2 e, times ln 2
    m5 = 5e4 * math.log2(math.e)
    assert "$|m| = 5 \\cdot 10^4$ each costs up to $2.7 \\cdot 10^{-3}$" in txt
    assert round(2.0 ** (math.floor(math.log2(m5)) - 24) * math.log(2), 4) == 0.0027
    c_f32 = [_span(_rounds("c", H200, "candidate", LONG_F32, cfg)) for cfg in (x32, dict(x32, fast=True))]
    assert f"went from {c_f32[0]}% to {c_f32[1]}%." in txt
    b_bf16 = [_span(_rounds("b", H100, "candidate", LONG_BF16, cfg)) for cfg in
              (k16, dict(k16, fast=True, min_blocks=5))]
    wide = ([1024, 262144], "bfloat16")
    b_wide = [_span(_rounds("b", H100, "candidate", wide, cfg)) for cfg in
              ({"cluster": 8, "threads": 512, "vec": 8}, {"cluster": 8, "threads": 512, "vec": 8, "fast": True})]
    assert (f"took `bfloat16` from {b_bf16[0]}% to {b_bf16[1]}% and the 1024 × 262 144 `bfloat16` rows from "
            f"{b_wide[0]}% to {b_wide[1]}%") in txt
    gap32, gap16, p16, cost32, cost16 = quoted(
        ch, r"The H200's long rows are still (\d+) and (\d+) points from its copy; the probe without arithmetic reads "
        r"[\d.-]+% and\s+([\d.]+)% there in the same run, so the arithmetic still costs (\d+) and (\d+) points")
    h200 = load("benchmarks/results/nvidia_h200.json")["records"]
    rep = {(tuple(r["shape"]), r["dtype"]): r["pct_copy"] for r in h200
           if r["kernel"] == "softmax" and r["impl"] == "flashcourse"}
    assert (round(100 - rep[_key(LONG_F32)]), round(100 - rep[_key(LONG_BF16)])) == (gap32, gap16)
    probe32 = _rounds("c", H200, "probe", LONG_F32, dict(x32, probe=3))
    probe16 = _rounds("c", H200, "probe", LONG_BF16, dict(k16, probe=3))
    assert _span(probe16) == f"{p16}" and f"reads {_span(probe32)}% and" in txt
    fast32 = _rounds("c", H200, "candidate", LONG_F32, dict(x32, fast=True))
    fast16 = _rounds("c", H200, "candidate", LONG_BF16, dict(k16, fast=True, min_blocks=5))
    mean = lambda v: sum(v) / len(v)  # noqa: E731
    assert (round(mean(probe32) - mean(fast32)), round(mean(probe16) - mean(fast16))) == (cost32, cost16)


def test_ch03_cache_hint_outlives_its_kernel():
    """Chapter 3's paragraph on the evict_last lines that outlived the timer's old flush: its numbers against runs
    s23/c (pred_probe.py), e (evict_probe.py) and f (pred_probe.py with the new flush), all on an H200."""
    def pct(run, name, target, pred):
        doc = load(f"{S23}/{run}/{name}.json")
        assert doc["gpu"] == H200
        copy = max(doc["copy_gbps"])
        return statistics.median(100 * r["gbps"] / copy for r in doc["rows"]
                                 if r["target"] == target and r["pred"] == pred)
    after, lo, hi, probe, other, left_lo, left_hi, fixed = quoted(
        "ch03_online_softmax", r"timed right after `torch.compile`'s, read ([\d.]+)% of the copy bandwidth, and "
        r"([\d.]+)% to ([\d.]+)% after anything else \(run `benchmarks/gpu_2026-11-29_s23/c`\)\. A kernel of ours that "
        r"does nothing but read \$x\$ with the hint lifted Liger-Kernel's softmax just as much, ([\d.]+)%; the same "
        r"kernel reading another buffer of the same size did not, ([\d.]+)% \(run `e`\)\..{0,700}?read (\d)-(\d)% "
        r"faster, run `h`\).{0,200}?right after `torch.compile`'s, read ([\d.]+)% \(run `f`\)")
    others = [round(pct("c", "c1", "liger", p), 1) for p in ("torch", "ours", "liger", "copy", "idle", "nothing")]
    assert round(pct("c", "c1", "liger", "torch.compile"), 1) == after and (min(others), max(others)) == (lo, hi)
    assert round(pct("e", "e1", "liger", "read x evict_last"), 1) == probe and abs(probe - after) <= 0.5
    assert round(pct("e", "e1", "liger", "read other evict_last"), 1) == other and other < after - 1
    h = load(f"{S23}/h/h1.json")  # the flush's own lines left at evict_last: how much faster the next kernel read
    assert h["gpu"] == H200

    def gbps(flush, impl):
        return statistics.median(r["gbps"] for r in h["rows"] if r["flush"] == flush and r["impl"] == impl)
    gains = [100 * (gbps("new, no applypriority", i) / gbps("new", i) - 1) for i in {r["impl"] for r in h["rows"]}]
    assert (math.floor(min(gains)), math.ceil(max(gains))) == (left_lo, left_hi), gains
    assert round(pct("f", "f1", "liger", "torch.compile"), 1) == fixed and fixed < after - 1
    assert "evict_last" in load("course/timing.py") and "applypriority" in load("course/timing.py")


def test_ch03_split_rows_measured():
    f32, bf16 = quoted("ch03_online_softmax", r"run `benchmarks/gpu_2026-11-27_s11/b`\), the kernel above, in "
                       r"`kernels_ref/ch03_online_softmax/softmax_split_rows.py`, read ([\d.]+)% of the copy bandwidth "
                       r"at 1024 × 131 072 `float32`, where Section 9's online kernels read about 64%\. .{0,600}?"
                       r"It read ([\d.]+)% in the same run\.")
    b = _cluster_sweep("b", H100)
    assert _sweep_pct(b, "triton-configs", *LONG_F32, SPLIT_F32) == f32
    assert _sweep_pct(b, "triton-configs", *LONG_BF16, TWO_READ_BF16) == bf16
    # the acquire, timed with and without on an H100: three rounds of each, the spans quoted
    a_lo, a_hi, n_lo, n_hi, ba_lo, ba_hi, bn_lo, bn_hi = quoted(
        "ch03_online_softmax", r"the kernel read ([\d.]+)-([\d.]+)% of the copy bandwidth at 1024 × 131 072 `float32` "
        r"with the acquire and ([\d.]+)-([\d.]+)% without it, about 8 points; the `bfloat16` kernel described below, "
        r"([\d.]+)-([\d.]+)% against ([\d.]+)-([\d.]+)%")
    acq = load(f"{S11}/a/acq.json")
    assert acq["gpu"] == H100
    span = {}
    for r in acq["records"]:
        span.setdefault((r["dtype"], r["impl"], json.dumps(r["config"], sort_keys=True)), []).append(round(r["pct"], 1))
    f32_cfg, bf16_cfg = json.dumps(SPLIT_F32, sort_keys=True), json.dumps(TWO_READ_BF16, sort_keys=True)
    for key, lo, hi in ((("float32", "acquire (today)", f32_cfg), a_lo, a_hi),
                        (("float32", "no acquire (before)", f32_cfg), n_lo, n_hi),
                        (("bfloat16", "acquire (today)", bf16_cfg), ba_lo, ba_hi),
                        (("bfloat16", "no acquire (before)", bf16_cfg), bn_lo, bn_hi)):
        assert len(span[key]) == 3 and (min(span[key]), max(span[key])) == (lo, hi), key
    assert {tuple(r["shape"]) for r in acq["records"] if r["dtype"] == "float32"} == {(1024, 131072)}
    assert round(statistics_mean(span[("float32", "no acquire (before)", f32_cfg)])
                 - statistics_mean(span[("float32", "acquire (today)", f32_cfg)])) == 8  # "about 8 points"
    lo, hi, lo2, hi2 = quoted("ch03_online_softmax", r"reached ([\d.]+)-([\d.]+)% on that `bfloat16` shape and the "
                              r"second kernel ([\d.]+)-([\d.]+)%")
    runs = [load(f"benchmarks/gpu_2026-11-26_{run}/softmax_long_rows_sweep.json")["records"]
            for run in ("s8/sweeps", "s8/rerun", "s9/b", "s9/c")]
    held = [r["pct"] for recs in runs for r in recs
            if r["impl"] == "fast-default" and r["shape"] == [2048, 131072] and r["config"]["kernel"] == "split"]
    second = [r["pct"] for recs in runs for r in recs if r["impl"] == "candidate" and r["shape"] == [2048, 131072]
              and r["config"] == {"kernel": "long_rows", "k": 4, "block": 8192, "warps": 8, "per_sm": 3,
                                  "hints": True, "reverse": False, "stages": 1}]
    assert len(held) == 4 and (round(min(held), 1), round(max(held), 1)) == (lo, hi)
    assert len(second) == 4 and (round(min(second), 1), round(max(second), 1)) == (lo2, hi2)
    base, lo3, hi3 = quoted("ch03_online_softmax",
                            r"raised it from ([\d.]+)% to ([\d.]+)-([\d.]+)% of copy in two runs")
    plain, pre = [], []
    for k in (1, 2):
        for r in load(f"benchmarks/gpu_2026-11-26_s9/k/softmax_long_rows_sweep_{k}.json")["records"]:
            c = r.get("config") or {}
            if r["impl"] == "candidate" and r["shape"] == [2048, 131072] and c.get("kernel") == "chunks" \
                    and c["hints"] and not c["fresh"]:
                (pre if c["prescale"] else plain).append(round(r["pct"], 1))
    assert set(plain) == {base} and (min(pre), max(pre)) == (lo3, hi3) and len(pre) == 2
    cols, row_kib, rf_kib, regs = quoted("ch03_online_softmax", r"One program cannot keep it: a ([\d ]+)-column "
                                          r"`float32` row is (\d+) KiB, twice the (\d+) KiB .{0,120}?\(([\d ]+) "
                                          r"registers of 4 bytes\)")
    chunk, chunk_kib, per_thread, threads, warps, k = quoted(
        "ch03_online_softmax", r"With \$C = ([\d\\,]+)\$ \((\d+) KiB of `float32`: (\d+) values in each of the "
        r"(\d+) threads of a (\d+)-warp program\) a 131 072-column row has \$K = (\d+)\$ chunks")
    assert cols * 4 == row_kib * 1024 == 2 * rf_kib * 1024 and regs * 4 == rf_kib * 1024
    assert chunk * 4 == chunk_kib * 1024 and per_thread * threads == chunk and threads == 32 * warps
    assert cols / chunk == k


def statistics_mean(values: list[float]) -> float:
    return sum(values) / len(values)


def test_ch03_cluster_measured():
    """Section 9's thread-block cluster: the reports' numbers, the sweeps' side-by-side numbers and the block shapes,
    each against the committed JSON it comes from; the sizes the text derives, recomputed."""
    ch = "ch03_online_softmax"
    h100_f32, h100_bf16, h200_f32, h200_bf16 = quoted(
        ch, r"In the course's report on an H100 \(2026-11-27, `flashcourse bench --report`, run "
        r"`benchmarks/gpu_2026-11-27_s13/e`\) it read ([\d.]+)% of the copy bandwidth at 1024 × 131 072 `float32`, "
        r"as fast as a copy, which is what reading \$x\$ once and writing \$y\$ once allows, and ([\d.]+)% at "
        r"2048 × 131 072 `bfloat16`; on an H200 \(run `benchmarks/gpu_2026-11-29_s23/g`, its first report\) "
        r"([\d.]+)% and ([\d.]+)%")
    assert h100_f32 >= 99.5  # "as fast as a copy"
    old_f32, old_bf16, first_f32, first_bf16 = quoted(
        ch, r"Its report at that point \(run `benchmarks/gpu_2026-11-27_s11/n`\)\s+read ([\d.]+)% at the "
        r"`float32` shape and ([\d.]+)% at the `bfloat16` one, .{0,170}?the first version had read ([\d.]+)% and\s+"
        r"([\d.]+)% there \(run `d`\)")
    reports = {}
    for rel, gpu, f32, bf16, date in (
            ("benchmarks/results/nvidia_h100_80gb_hbm3.json", H100, h100_f32, h100_bf16, "2026-11-27"),
            ("benchmarks/results/nvidia_h200.json", H200, h200_f32, h200_bf16, "2026-11-29")):
        rep = load(rel)
        assert rep["gpu"] == gpu and rep["date"] == date
        ours = {(tuple(r["shape"]), r["dtype"]): r for r in rep["records"]
                if r["kernel"] == "softmax" and r["impl"] == "flashcourse"}
        assert round(ours[((1024, 131072), "float32")]["pct_copy"], 1) == f32
        assert round(ours[((2048, 131072), "bfloat16")]["pct_copy"], 1) == bf16
        reports[gpu] = (rep, ours)
    # each report is the named run's (its report.log prints the same GB/s)
    for run, gpu, log_name in ((f"{S13}/e", H100, "report.log"), (f"{S23}/g", H200, "g1.log")):
        log = load(f"{run}/{log_name}")
        assert f"copy {round(reports[gpu][0]['copy_gbps'])} GB/s" in log  # the percentages' denominator too
        assert (load(f"{run}/gpu.txt") if os.path.exists(os.path.join(ROOT, run, "gpu.txt"))
                else load(f"{run}/info.txt")).splitlines()[0].strip() == gpu
        for shape, dtype in (LONG_F32, LONG_BF16):
            gbps = round(reports[gpu][1][(tuple(shape), dtype)]["gbps"])
            assert re.search(rf"softmax\s+{shape[0]}x{shape[1]}\s+{dtype}\s+flashcourse\s+{gbps} GB/s", log)
    # the eleventh session's reports, quoted as they were: l (H100) and n (H200), from their logs
    old = {run: _log_pcts(f"{S11}/{run}/report.log") for run in ("l", "n")}
    assert (old["n"][_key(LONG_F32)], old["n"][_key(LONG_BF16)]) == (old_f32, old_bf16)
    c_f32, c_bf16, t_f32, t_bf16, d_f32, d_bf16, dt_f32, dt_bf16 = quoted(
        ch, r"the first version read, on an H100 \(run `b`, as above\), ([\d.]+)% and ([\d.]+)% against ([\d.]+)% "
        r"and ([\d.]+)% for the Triton kernels, and on an H200 \(run `d`\) ([\d.]+)% and ([\d.]+)% against "
        r"([\d.]+)% and ([\d.]+)%\.")
    f32_cfg = {"cluster": 8, "threads": 128, "vec": 32}
    bf16_cfg = {"cluster": 8, "threads": 128, "vec": 16}
    for run, gpu, cf, cb, tf, tb in (("b", H100, c_f32, c_bf16, t_f32, t_bf16),
                                     ("d", H200, d_f32, d_bf16, dt_f32, dt_bf16)):
        recs = _cluster_sweep(run, gpu)
        assert _sweep_pct(recs, "candidate", *LONG_F32, f32_cfg) == cf
        assert _sweep_pct(recs, "candidate", *LONG_BF16, bf16_cfg) == cb
        assert _sweep_pct(recs, "triton-configs", *LONG_F32, SPLIT_F32) == tf
        assert _sweep_pct(recs, "triton-configs", *LONG_BF16, TWO_READ_BF16) == tb
    (above,) = quoted(ch, r"now hands `float32` and `bfloat16` rows of more\s+than ([\d ]+) columns to this CUDA "
                      r"kernel on Hopper GPUs")
    assert f"CLUSTER_ABOVE = {int(above)}" in load("kernels_ref/ch03_online_softmax/softmax_split_rows.py")
    # the shipped CONFIGS are the configurations quoted (8 blocks of 128 threads, 32 / 16 vectors a thread)
    cfg_src = load("kernels_ref/ch03_online_softmax/softmax_cluster.py")
    assert '(131072, {"cluster": 8, "threads": 128, "vec": 32, "one_exp": True, "fast": True})' in cfg_src
    assert '(131072, {"cluster": 8, "threads": 128, "vec": 16, "fast": True, "min_blocks": 5})' in cfg_src
    small, mid, large = quoted(ch, r"128-thread blocks of 32 vectors a thread read ([\d.]+)% at\s+the `float32` "
                               r"shape, 512-thread blocks of 8 vectors ([\d.]+)% and 256-thread blocks of 16 vectors "
                               r"([\d.]+)%, the\s+same 16 384 columns a block in all three")
    a = _cluster_sweep("a", H100)
    for (threads, vec), pct in (((128, 32), small), ((512, 8), mid), ((256, 16), large)):
        assert _sweep_pct(a, "candidate", *LONG_F32, {"cluster": 8, "threads": threads, "vec": vec}) == pct
        assert threads * vec * 4 == 16384
    # the cache hints: run k (the kernel with and without them), run l (the probe, data movement only)
    assert "LD, ST = 2, 1" in cfg_src  # the shipped default: no hint (softmax_cluster.cu's SC_LD 2, SC_ST 1)
    nf, nb, hf, hb = quoted(ch, r"the same kernel without the hints read ([\d.]+)% and ([\d.]+)% against "
                            r"([\d.]+)% and ([\d.]+)% with them")
    k = _cluster_sweep("k", H100)
    x32 = dict(f32_cfg, one_exp=True)
    assert _sweep_pct(k, "candidate", *LONG_F32, dict(x32, ld=2, st=1)) == nf
    assert _sweep_pct(k, "candidate", *LONG_BF16, dict(bf16_cfg, ld=2, st=1)) == nb
    assert _sweep_pct(k, "candidate", *LONG_F32, x32) == hf  # run k's default was still the hints (ld 0, st 0)
    assert _sweep_pct(k, "candidate", *LONG_BF16, bf16_cfg) == hb
    with_h, without = quoted(ch, r"read ([\d.]+)% with the hints and ([\d.]+)% without \(run `l`\)")
    ll = _cluster_sweep("l", H100)
    # what a config without "ld"/"st" meant at each run's commit: the hints in k (9c1e8a5), none in l (2234094)
    assert load(f"{S11}/k/head.txt").strip() == "9c1e8a5" and load(f"{S11}/l/head.txt").strip() == "2234094"
    assert _sweep_pct(ll, "probe", *LONG_F32, dict(x32, ld=0, st=0, probe=3)) == with_h
    assert _sweep_pct(ll, "probe", *LONG_F32, dict(x32, probe=3)) == without
    short, probe_bf16 = quoted(ch, r"The `bfloat16` kernel then stayed (\d+)\s+points short of the copy; the same "
                               r"probe in `bfloat16` read ([\d.]+)% \(run `l`\)")
    assert round(100 - old["l"][_key(LONG_BF16)]) == short
    assert _sweep_pct(ll, "probe", *LONG_BF16, dict(bf16_cfg, probe=3)) == probe_bf16
    level = [_sweep_pct(ll, "candidate", *LONG_F32, c) for c in (x32, f32_cfg)]
    assert abs(level[0] - level[1]) <= 0.1  # "without them the two are level (run `l`)"
    # the copy bandwidths of the two reports and their ratio
    h200_copy, h100_copy = quoted(ch, r"about 1\.4 times as fast as the H100's\s+\((\d+) GB/s against (\d+) GB/s in "
                                  r"the eleventh session's two reports\)")
    assert (h200_copy, h100_copy) == (round(old["n"]["copy"]), round(old["l"]["copy"]))
    assert round(h200_copy / h100_copy, 1) == 1.4
    # run d's report.log is the first version's H200 report (the numbers quoted for it; GB/s printed to the unit)
    dlog = load(f"{S11}/d/report.log")
    copy = float(re.search(r"copy ([\d.]+) GB/s; wrote", dlog).group(1))
    for (shape, dtype), pct in ((LONG_F32, first_f32), (LONG_BF16, first_bf16)):
        gbps = float(re.search(rf"softmax\s+{shape[0]}x{shape[1]}\s+{dtype}\s+flashcourse\s+([\d.]+) GB/s",
                               dlog).group(1))
        assert abs(100 * gbps / copy - pct) < 0.06
    # where the rest goes on the H200: the data-movement probe (run n) and one exponential an element
    p32, p16, k32, k16, cost32, cost16 = quoted(
        ch, r"moving the data alone reads ([\d.]+)%\s+\(`float32`\) and ([\d.]+)% \(`bfloat16`\) on the H200 "
        r"\(run `n`\), against ([\d.]+)% and ([\d.]+)% for the kernel in the\s+same run, so the arithmetic costs "
        r"(\d+) and (\d+) points there")
    n = _cluster_sweep("n", H200)
    assert _sweep_pct(n, "probe", *LONG_F32, dict(f32_cfg, one_exp=True, probe=3)) == p32
    assert _sweep_pct(n, "probe", *LONG_BF16, dict(bf16_cfg, probe=3)) == p16
    assert _sweep_pct(n, "candidate", *LONG_F32, dict(f32_cfg, one_exp=True)) == k32
    assert _sweep_pct(n, "candidate", *LONG_BF16, bf16_cfg) == k16
    assert (round(p32 - k32), round(p16 - k16)) == (cost32, cost16)
    (h100_cost16,) = quoted(ch, r"against next to nothing and (\d+) points on the\s+H100")
    assert _sweep_pct(ll, "probe", *LONG_F32, dict(x32, probe=3)) - _sweep_pct(ll, "candidate", *LONG_F32, x32) < 0.5
    assert round(_sweep_pct(ll, "probe", *LONG_BF16, dict(bf16_cfg, probe=3))
                 - _sweep_pct(ll, "candidate", *LONG_BF16, bf16_cfg)) == h100_cost16
    on, off = quoted(ch, r"On the H200 that read ([\d.]+)% against ([\d.]+)% \(run `n`\)")
    assert _sweep_pct(n, "candidate", *LONG_F32, dict(f32_cfg, one_exp=True)) == on
    assert _sweep_pct(n, "candidate", *LONG_F32, f32_cfg) == off
    sms, slower = quoted(ch, r"The H200 has as many SMs as the H100 \((\d+)\), and a copy 1\.4 times as fast\s+"
                         r"leaves each SM about ([\d.]+) times the H100's time per byte")
    assert load(f"{S11}/a/cluster.json")["sms"] == load(f"{S11}/d/cluster.json")["sms"] == sms
    assert round(h100_copy / h200_copy, 1) == slower
    # one exponential an element (run f, H100) and the persistent clusters that lost (run e, H200)
    one, two = quoted(ch, r"on an H100, ([\d.]+)% against ([\d.]+)%\s+with the hints "
                      r"\(`benchmarks/gpu_2026-11-27_s11/f`\)")
    f = _cluster_sweep("f", H100)
    assert _sweep_pct(f, "candidate", *LONG_F32, dict(f32_cfg, one_exp=True)) == one
    assert _sweep_pct(f, "candidate", *LONG_F32, f32_cfg) == two
    lo, hi, plain = quoted(ch, r"Clusters that stay and loop over rows lost: ([\d.]+) to ([\d.]+)% in `float32` on an "
                           r"H200 \(`benchmarks/gpu_2026-11-27_s11/e`\), against ([\d.]+)% for the first version")
    e = _cluster_sweep("e", H200)
    persist = [round(r["pct"], 1) for r in e if r["impl"] == "candidate" and r["shape"] == list(LONG_F32[0])
               and r["dtype"] == LONG_F32[1] and "per_sm" in r["config"]]
    assert len(persist) == 3 and (min(persist), max(persist)) == (lo, hi)
    assert _sweep_pct(e, "candidate", *LONG_F32, f32_cfg) == plain
    few, runs, asks, fits = quoted(ch, r"fewer blocks than fit \((\d) an SM, where the kernel\s+runs (\d)\) or "
                                   r"more clusters than can run at once \((\d) an SM asks for (\d+) clusters")
    (most,) = quoted(ch, r"where Nsight Compute counts\s+at most (\d+) for this kernel on an H100")
    assert {r["config"]["per_sm"] for r in e if "per_sm" in r.get("config", {}) and r["dtype"] == "float32"} == {
        few, asks}
    assert re.search(rf"Block Limit Registers\s+block\s+{int(runs)}\b", load(f"{S11}/g/ncu.txt"))
    assert re.search(rf"Max Active Clusters\s+cluster\s+{int(most)}\b", load(f"{S11}/g/ncu.txt"))
    assert sms * asks // 8 == fits > most
    # the sizes the text derives: P columns a block, 8 P a row, 32 vectors of 4 float32 values a thread
    p, row, vecs, per_vec, per_thread, threads, per_block = quoted(
        ch, r"part \$r\$ of the row, \$P = ([\d\\,]+)\$ columns: the chunk \$C\$ of the ticket kernel, so "
        r"\$8P = ([\d\\,]+)\$ columns, one row\. In `float32` a 128-thread block holds its part as (\d+) vectors "
        r"of 16 bytes in each thread, \$32 \\cdot (\d) = (\d+)\$ values a thread and \$(\d+) \\cdot 128 = "
        r"([\d\\,]+)\$ a block")
    assert 8 * p == row == 131072 and vecs * per_vec == per_thread and per_vec * 4 == 16
    assert per_thread * threads == per_block == p == f32_cfg["threads"] * f32_cfg["vec"] * 4
    (bf16_vecs,) = quoted(ch, r"`bfloat16` packs 8 values in a vector: (\d+) vectors a thread")
    assert bf16_vecs == bf16_cfg["vec"] and bf16_vecs * 8 * 128 == p
    (merges,) = quoted(ch, r"(\d) merges each, against 16 384 values loaded")
    assert merges == f32_cfg["cluster"] - 1


def test_one_warp_bar_claim_matches_the_class_logs():
    """thresholds.toml's ch01.softmax_triton note: every grading of the one-warp kernel in the H100 classes lost
    its 2 bandwidth points, every solution and Triton variant kept full marks."""
    note = load("autograder/thresholds.toml")
    logs = ["benchmarks/gpu_2026-11-26_s6/class_ch01_200mixed_1gpu_call1.log",
            "benchmarks/gpu_2026-11-26_s6/class_ch01_200mixed_2gpu.log",
            "benchmarks/gpu_2026-11-26_s6/class_ch01_200mixed_1gpu_call2.log",
            "benchmarks/gpu_2026-11-26_s7/class2gpu/class.log",
            "benchmarks/gpu_2026-11-26_s7/class2gpu_pipelined/class.log",
            "benchmarks/gpu_2026-11-26_s8/class_ch01_1gpu/class.log",
            "benchmarks/class_ch01_200mixed_h100_partial.log"]
    text_ = "".join(load(p) for p in logs)
    for kind, times, score in (("triton_one_warp", 36, "18/20"), ("solution", 39, "20/20"),
                               ("variant_triton_exp2", 33, "20/20"), ("variant_triton_worked_example", 12, "20/20")):
        graded = re.findall(rf"-{kind}: (\d+/\d+)", text_)
        assert len(graded) == times and set(graded) == {score}, (kind, len(graded), set(graded))
    assert "graded 36 times" in note and "(39 times)" in note and "33 times" in note and "12 times" in note


def test_ch04_exp2_on_the_fma_units():
    """Section 7's lost idea: the polynomial's error (refitted here), and the ratios of run s13/f (medians of three
    interleaved rounds, each variant against choose()'s config on the same shape)."""
    import numpy as np
    (err,) = quoted("ch04_flash_attention", r"polynomial of degree 3 \(largest relative error \$([\d.]+) \\cdot 10")
    f = np.cos(np.linspace(0, np.pi, 2001)) * 0.5
    y, a, w = 2.0 ** f, np.vander(f, 4, increasing=True), np.ones_like(f)
    for _ in range(200):  # Lawson's iteration towards the least largest relative error
        c = np.linalg.lstsq(a * (np.sqrt(w) / y)[:, None], y * np.sqrt(w) / y, rcond=None)[0]
        w = w * np.abs(a @ c / y - 1)
        w /= w.sum()
    ff = np.linspace(-0.5, 0.5, 100001)
    assert round(np.abs(np.polyval(c[::-1], ff) / 2 ** ff - 1).max() * 1e5, 1) == err
    doc = load(f"{S13}/f/emu.json")
    assert doc["device"] == H100 and load(f"{S13}/f/info.txt").splitlines()[0] == H100
    ratios: dict = {}
    base = {(r["D"], r["T"], r["causal"]): r["tflops"] for r in doc["records"] if r["variant"].startswith("choose ")}
    assert len(base) == 12 and all(len(r["ms_rounds"]) == 3 for r in doc["records"] if "ms_rounds" in r)
    for r in doc["records"]:
        m = re.match(r"choose\+emu(\d) ", r["variant"])
        if m:
            ratios.setdefault(int(m.group(1)), []).append(r["tflops"] / base[(r["D"], r["T"], r["causal"])])
    spans = {n: (f"{min(v):.2f}", f"{max(v):.2f}") for n, v in ratios.items()}
    assert all(len(v) == 12 for v in ratios.values())
    assert (f"one exponential in two on the FMA units made the kernel {spans[2][0]} to {spans[2][1]} times as fast, "
            f"one in four {spans[4][0]} to {spans[4][1]} times, one in eight {spans[8][0]} to {spans[8][1]} times"
            in flat("ch04_flash_attention"))


def test_ch05_persistent_grid_measured():
    """Exercise 2's 'Why not a persistent grid?': the H200 run s25/c (rms_persistent_probe.py) and the reference's
    register count (s24/e, e0.json), and the register arithmetic the paragraph derives; and the statement's widths."""
    ch = "ch05_fused_norms"
    ref, best, ref_w, best_w = quoted(
        ch, r"at 16 384 × 4 096 `bfloat16` one program per row read ([\d.]+)% of the copy bandwidth and the best "
        r"looping version ([\d.]+)% \(4 warps a program, 4 programs per SM, the next row loaded early\); at "
        r"4 096 × 16 384, ([\d.]+)% against ([\d.]+)%, where the two kernels' times from round to round overlap")
    doc = load("benchmarks/gpu_2026-11-29_s25/c/c1.json")
    assert doc["gpu"] == "NVIDIA H200"
    recs = {(tuple(c["shape"]), r["impl"]): r for c in doc["cases"] for r in c["records"]}
    pct = {k: round(r["pct_copy"], 1) for k, r in recs.items()}
    tall, wide = (16384, 4096), (4096, 16384)
    looping = lambda shape: {impl: v for (s, impl), v in pct.items() if s == shape and "/SM" in impl}  # noqa: E731
    assert (pct[tall, "reference"], pct[tall, "prefetch 4/SM w4"], max(looping(tall).values())) == (ref, best, best)
    assert (pct[wide, "reference"], max(looping(wide).values())) == (ref_w, best_w)
    fastest_wide = max(looping(wide), key=looping(wide).get)
    a, b = (recs[wide, impl]["ms_rounds"] for impl in ("reference", fastest_wide))
    assert max(a) >= min(b) and max(b) >= min(a)  # "overlap"
    warps, threads, per_thread, regs, rounded, per_sm, threads2, rounded2, progs, progs2, threads3, rounded3, used, \
        seventh, resident, max_warps, prefetch_regs, allocated, fit, fit_warps = quoted(
            ch, r"There the reference runs (\d+) warps \((\d+) threads\) a program, so each thread holds 4 096 / \d+ = "
            r"(\d+) values; it takes (\d+) registers a thread .*?rounded up to (\d+) \(registers are handed out in "
            r"multiples of 8 a thread\)\. .*?fit ⌊([\d ]+) / \((\d+) × (\d+)\)⌋ = (\d+) such programs \((\d+) "
            r"programs × (\d+) threads × (\d+) registers = ([\d ]+); a seventh would need ([\d ]+)\): (\d+) of its "
            r"(\d+) warps\. An 8-warp looping program that also holds the next row takes (\d+) registers a thread "
            r"\((\d+) allocated\), so (\d+) fit: (\d+) warps")
    e0 = load("benchmarks/gpu_2026-11-29_s24/e/e0.json")
    assert e0["gpu"] == "NVIDIA H200" and e0["rows"][0]["maxnreg"] is None and e0["rows"][0]["n_regs"] == regs
    # the reference's launch at 4096 columns: BLOCK 4096, num_warps = BLOCK // 512 (rmsnorm_triton)
    assert "warps = min(16, max(1, BLOCK // 512))" in load("kernels_ref/ch05_fused_norms/rmsnorm_triton.py")
    assert warps == 4096 // 512 and threads == threads2 == threads3 == 32 * warps and per_thread == 4096 / threads
    assert rounded == rounded2 == rounded3 == -(-regs // 8) * 8 and allocated == -(-prefetch_regs // 8) * 8
    assert e0["regs_per_sm"] == per_sm and progs == progs2 == per_sm // (threads * rounded)
    assert used == progs * threads * rounded and seventh == (progs + 1) * threads * rounded > per_sm
    assert resident == progs * warps and max_warps == 2048 // 32  # sm_90: at most 2048 threads an SM
    assert fit == per_sm // (threads * allocated) and fit_warps == fit * warps
    plain2, plain4, plain8 = quoted(ch, r"looping without the early load, 2 programs per SM read ([\d.]+)% and 4 read "
                                    r"([\d.]+)%, but 8 read no more \(([\d.]+)%\)")
    assert [pct[tall, f"plain {k}/SM w8"] for k in (2, 4, 8)] == [plain2, plain4, plain8] and plain8 <= plain4
    # the prefetching kernel (PREFETCH=True) at 8 warps, from the probe's record of each compiled specialization
    (w8,) = [v["n_regs"] for k, v in doc["cases"][0]["regs"].items()
             if "('constexpr', True)]{'num_warps': 8," in k]
    assert w8 == prefetch_regs
    # the statement's widths: those of the correctness check's cases
    from autograder import registry
    widths = quoted(ch, r"the correctness test alone uses (\d+), ([\d ]+) and ([\d ]+) columns")
    assert sorted(widths) == sorted({c.shape[1] for c in registry.get("ch05.rmsnorm_triton").cases["correctness"]})
