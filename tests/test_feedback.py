"""`flashcourse feedback CH`: pages a student would read, and the class report, checked in their HTML and in a real
headless Chromium (offline: every page loads with no failed or outside request, every picture decodes, no script
runs, no message is hidden behind a scrollbar).

Two classes: one submission graded for real on this machine (CPU mode: timed checks "not graded"), which prints a
hostile `<script>` from a solution cell; and SYNTHETIC result files with GPU-like timed checks (TEST DATA: their
messages are copied or adapted from benchmarks/grading_v2_engine_*_h100.log; no GPU ran them for this test).
"""
import csv
import html
import json
import os
import subprocess
import sys

import nbformat
import pytest

from autograder.instructor import classgrade, feedback
from autograder.judge import testcells
from autograder.judge.verdict import Kind, Measurement, Verdict
from test_classgrade import CH, SOLVED, _cell, _release, make_course

H100 = "NVIDIA H100 80GB HBM3"
HOSTILE = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">"


def bandwidth(gbps, copy, need, rounds=566):
    """A bandwidth Measurement as the judge makes one (TEST DATA: the numbers are copied or adapted from
    benchmarks/grading_v2_engine_ch01-02_h100.log, the reference kernels' lines, and benchmarks/
    grading_v2_bench_h100.json, the known-wrong one-warp Triton kernel; no GPU ran them for this test)."""
    return Measurement(unit="GB/s", value=gbps, roof=copy, roof_name="copy bandwidth", fraction=gbps / copy,
                       need=need, calibrated=False, device=H100, shape=(8192, 8192), case="adversarial",
                       dtype="float32", model="read x once + write y once = 2 · rows · cols · 4 B",
                       ms=2 * 8192 * 8192 * 4 / gbps / 1e6, rounds=rounds, sets=2, overhead=0.0003, graph=True)


def throughput(tflops, baseline, need):
    """TEST DATA, from benchmarks/grading_v2_engine_ch03-05_h100.log (ch04 reference and no-skip kernels)."""
    return Measurement(unit="TFLOP/s", value=tflops, roof=baseline, roof_name="PyTorch SDPA (flash backend)",
                       fraction=tflops / baseline, need=need, calibrated=False, device=H100, shape=(4, 32, 4096, 128),
                       case="causal", dtype="bfloat16", ms=1.0, rounds=73, sets=2, overhead=0.0005, graph=True,
                       model="4·B·H·T²·D / 2 (two T x T x D matmuls per head; causal: half)")


TRITON_FAST = (True, "", bandwidth(2962, 2999, 0.74))
TRITON_SLOW = (False, "", bandwidth(2142, 2996, 0.74), 1234)
TRITON_MID = (True, "", bandwidth(2500, 3001, 0.74))
CUDA_FAST = (True, "", bandwidth(2362, 3001, 0.60))
LONG_TOKEN = "END-OF-A-VERY-LONG-MESSAGE"
CUDA_WRONG = ("shape (1823, 781), adversarial inputs: y[17, 3] = nan, expected 0.0012: " + "row 17 " * 400
              + f"kernel name {HOSTILE} {LONG_TOKEN}")
ATTN_FAST = (True, "", throughput(425, 316, 0.90))
ATTN_SLOW = (False, "", throughput(220, 316, 0.90), 99)


def synthetic(student, chapter, cells, verdicts, *, solutions=None, attention=None):
    """A result file as classgrade.grade_submission writes it. cells: grade_id -> (calls, points); verdicts:
    (exercise, check) -> (passed, detail[, measurement[, seed]]); checks not listed pass with "ok"."""
    vs = {}
    for gid, (calls, pts) in cells.items():
        for e, k in calls:
            passed, detail, measurement, seed = (*verdicts.get((e, k), (True, "ok")), None, None)[:4]
            vs[(e, k)] = Verdict(e, k, Kind.PASSED if passed else Kind.FAILED, detail, measurement, seed,
                                 seconds=7.5 if measurement else 1.0)
    out = {gid: dict(testcells.cell_verdict(calls, vs).to_json(), points=pts) for gid, (calls, pts) in cells.items()}
    return {"version": classgrade.VERSION, "student": student, "chapter": chapter, "mode": "gpu", "device": H100,
            "graded_at": "2026-11-23T12:00:00+00:00", "notebook": f"submitted/{student}/{chapter}/{chapter}.ipynb",
            "sha256": "0" * 64, "attention": attention or [], "cells": out, "solutions": solutions or {},
            "checks": [v.to_json() for v in vs.values()], "seconds": 60.0}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Three sets of pages: a real graded submission (CLI), a synthetic GPU class of ch01 (with the course's
    source notebook) and a synthetic ch04 class without a course (layout from the result files)."""
    root = make_course(str(tmp_path_factory.mktemp("class")), n_blank=0)
    nb = _release()  # eve: safe_softmax solved, and a solution cell that prints HTML
    c = _cell(nb, "safe_softmax")
    c.source = (f"print({HOSTILE!r})\n"
                + c.source.replace("# YOUR CODE HERE\n    raise NotImplementedError()", SOLVED))
    os.makedirs(os.path.join(root, "submitted", "eve", CH))
    nbformat.write(nb, os.path.join(root, "submitted", "eve", CH, f"{CH}.ipynb"))
    classgrade.write_atomic(os.path.join(root, "results", CH, "eve.json"), classgrade.grade_submission(root, CH, "eve"))
    r = subprocess.run([sys.executable, "-m", "autograder.instructor.cli", "feedback", CH, "--course-dir", root],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr

    source = classgrade.grade_cells(classgrade.source_notebook(root, CH))
    layout = {g: (v["calls"], v["points"]) for g, v in source.items()}
    gpu = os.path.join(root, "gpu_results")
    os.makedirs(gpu)
    ex_t, ex_c = "ch01.softmax_triton", "ch01.softmax_cuda"
    results = {
        "ada": synthetic("ada", CH, layout, {(ex_t, "bandwidth"): TRITON_FAST, (ex_c, "bandwidth"): CUDA_FAST},
                         solutions={"softmax_triton": "compiled softmax_kernel\n"}),
        "grace": synthetic("grace", CH, layout, {
            (ex_t, "bandwidth"): TRITON_SLOW, (ex_c, "correctness"): (False, CUDA_WRONG),
            (ex_c, "bandwidth"): (False, "not timed: the kernel must first pass its correctness check: " + CUDA_WRONG)},
            solutions={"softmax_cuda": HOSTILE}, attention=[f"renamed notebook: {HOSTILE}.ipynb graded as {CH}.ipynb"]),
        "dave": synthetic("dave", CH, layout, {(ex_t, "bandwidth"): TRITON_MID, (ex_c, "bandwidth"): CUDA_FAST}),
    }
    for s, res in results.items():
        classgrade.write_atomic(os.path.join(gpu, f"{s}.json"), res)
    anon, named = os.path.join(root, "fb_anon"), os.path.join(root, "fb_named")
    assert feedback.feedback(root, CH, results=gpu, out_dir=anon, leaderboard=True, out=open(os.devnull, "w")) == 0
    assert feedback.feedback(root, CH, results=gpu, out_dir=named, leaderboard=True, names=True,
                             out=open(os.devnull, "w")) == 0

    ch4 = "ch04_flash_attention"
    fa = "ch04.flash_attention_triton"
    layout4 = {"test_flash_attention_triton": ([(fa, "correctness")], 3.0),
               "test_flash_attention_triton_throughput": ([(fa, "throughput")], 3.0)}
    res4 = os.path.join(root, "ch04_results")
    os.makedirs(res4)
    for s, v in {"hopper": ATTN_FAST, "turing": ATTN_SLOW}.items():
        classgrade.write_atomic(os.path.join(res4, f"{s}.json"), synthetic(s, ch4, layout4, {(fa, "throughput"): v}))
    nocourse = str(tmp_path_factory.mktemp("nocourse"))
    out4 = os.path.join(nocourse, "fb4")
    assert feedback.feedback(nocourse, ch4, results=res4, out_dir=out4, leaderboard=True,
                             out=open(os.devnull, "w")) == 0
    return {"root": root, "cpu": os.path.join(root, "feedback_html", CH), "anon": anon, "named": named, "ch04": out4}


def _read(*parts) -> str:
    with open(os.path.join(*parts), encoding="utf-8") as f:
        return f.read()


def test_a_graded_submission_gets_a_named_escaped_page(pages):
    root = pages["root"]
    assert not os.path.exists(os.path.join(root, "feedback")), "nbgrader's own feedback/ folder is left alone"
    assert sorted(os.listdir(pages["cpu"])) == ["class.csv", "eve.html", "index.html"]
    page = _read(pages["cpu"], "eve.html")
    assert "Score: 4 / 20" in page and "Safe softmax (hidden tests)" in page and "ch01.safe_softmax" in page
    assert "test_softmax_cuda_bandwidth" in page and "NOT GRADED" in page and "needs a GPU" in page
    assert page.count('class="cell ') == 8  # every test cell, each named
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page  # what the solution cell printed, escaped
    assert "<script" not in page.lower() and "<img src=x" not in page
    rows = list(csv.reader(open(os.path.join(pages["cpu"], "class.csv"))))
    assert rows[0][:4] == ["student", "points", "possible", "test_safe_softmax"] and rows[1][:3] == ["eve", "4", "20"]


def test_timed_checks_get_a_chart_and_the_whole_message(pages):
    ada, grace = _read(pages["anon"], "ada.html"), _read(pages["anon"], "grace.html")
    assert "Score: 20 / 20" in ada and ada.count("data:image/png;base64,") == 2
    # the chart's numbers (its alt text): the student, the bar (74% x 2999), the committed H100 reference, the copy
    assert "your kernel: 2962 GB/s; the bar (74% of copy): 2219 GB/s; reference kernel (99%)" in ada
    assert f"copy bandwidth: 2999 GB/s ({H100})" in ada
    # the whole sentence, rendered from the measurement as the student reads it in the notebook
    assert html.escape("2962 GB/s = 99% of the copy bandwidth (2999 GB/s) at (8192, 8192) adversarial float32 on "
                       f"{H100}; judge's clock, 566 rounds x 2 input sets, message overhead 0.03%; bytes = read x "
                       "once") in ada
    assert "needs &gt;= 74.0% (seed 1234)" in grace
    assert "Score: 13 / 20" in grace and "your kernel: 2142 GB/s" in grace
    assert "changed after it was graded" in _read(pages["anon"], "dave.html")  # submitted/dave is not this result
    assert "changed after" not in ada and "graded 2026-11-23 12:00 UTC" in ada
    assert LONG_TOKEN in grace and "not timed: the kernel must first pass" in grace  # never cut
    assert "<script" not in grace.lower() and "&lt;script&gt;" in grace and "renamed notebook: &lt;script" in grace
    hopper, turing = _read(pages["ch04"], "hopper.html"), _read(pages["ch04"], "turing.html")
    assert "your kernel: 425 TFLOP/s; the bar (0.90x baseline): 284 TFLOP/s; reference kernel (1.35x)" in hopper
    assert "PyTorch baseline: 316 TFLOP/s" in hopper and "Flash attention Triton (throughput)" in turing


def test_class_report_and_leaderboard(pages):
    anon, named = _read(pages["anon"], "index.html"), _read(pages["named"], "index.html")
    for page in (anon, named):
        assert "3 submissions" in page and "data:image/png;base64," in page  # the histogram
        assert "Pass rate per exercise" in page and "Most failing checks" in page and "Slowest checks" in page
        assert "Leaderboard" in page and "ch01.softmax_triton [bandwidth]" in page
    for s in ("ada", "grace", "dave"):
        assert s not in anon and s in named
    labels = feedback.anonymous_labels(CH, ["ada", "grace", "dave"])
    assert labels == feedback.anonymous_labels(CH, ["dave", "ada", "grace"])  # stable
    board = anon.split("ch01.softmax_triton [bandwidth]</h3>")[1].split("</table>")[0]
    assert board.index(labels["ada"]) < board.index(labels["dave"]) and labels["grace"] not in board  # passing only
    rows = {r[0]: r for r in csv.reader(open(os.path.join(pages["anon"], "class.csv")))}
    assert rows["ada"][1:3] == ["20", "20"] and rows["grace"][1] == "13"
    assert "turing" not in _read(pages["ch04"], "index.html")


def _all_pages(pages) -> list[str]:
    return sorted(os.path.join(pages[k], f) for k in ("cpu", "anon", "named", "ch04")
                  for f in os.listdir(pages[k]) if f.endswith(".html"))


def test_every_page_renders_offline_in_chromium(pages, offline_chromium):
    paths = _all_pages(pages)
    assert len(paths) == 2 + 4 + 4 + 3
    page = offline_chromium.new_page()
    for path in paths:
        response = page.goto("file://" + path, wait_until="load")
        assert response is None or response.ok, path
        facts = page.evaluate("""() => ({
            images: [...document.images].map(i => [i.complete, i.naturalWidth, i.src.slice(0, 22)]),
            scripts: document.scripts.length,
            pwned: window.__pwned === undefined ? null : window.__pwned,
            hidden: [...document.querySelectorAll('pre, .msg')].filter(
                e => e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1).length,
            wide: document.documentElement.scrollWidth > window.innerWidth,
            text: document.body.innerText.length,
        })""")
        name = os.path.relpath(path, pages["root"])
        if not name.endswith("eve.html"):  # the CPU page has no timed numbers to draw
            assert facts["images"], f"{name}: no picture"
        for complete, width, src in facts["images"]:
            assert complete and width > 0 and src.startswith("data:image/png"), (name, complete, width, src)
        assert facts["scripts"] == 0 and facts["pwned"] is None, (name, facts)
        assert facts["hidden"] == 0 and not facts["wide"], f"{name}: text behind a scrollbar ({facts})"
        assert facts["text"] > 200, name
    requests, problems = offline_chromium.requests, offline_chromium.problems
    outside = [u for u in requests if not u.startswith(("file://", "data:"))]
    assert not outside and not problems, (outside, problems)
    assert json.dumps(requests).count("file://") == len(paths)
