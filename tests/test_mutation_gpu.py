"""The GPU side of mutation testing, checked without a GPU: the timed mutants (num_warps=1 on each Triton launch),
the reuse of an earlier, cut-off --gpu-recheck call's log lines, and the merged report files
(benchmarks/mutation/gpu/<gpu>.json and the CPU run's benchmarks/mutation/cpu.json: one entry per chapter)."""
from __future__ import annotations

import glob
import json
import os
import re

from autograder.instructor import mutate

CHAPTERS = ("ch01_softmax", "ch02_reductions", "ch03_online_softmax", "ch04_flash_attention", "ch05_fused_norms",
            "ch06_low_precision", "ch07_cross_entropy")


def test_every_triton_exercise_gets_a_timed_mutant_that_changes_only_its_launch_warps():
    triton = {ex.id for ch in CHAPTERS for ex in mutate.chapter_exercises(ch)
              if ex.solution.endswith(".py") and "tl.load" in open(ex.solution).read()}
    timed = [m for ch in CHAPTERS for m in mutate.timed_mutants(ch)]
    assert {m.exercise for m in timed} == triton
    for m in timed:
        changed = [ln for ln in m.diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
        assert len(changed) == 2, m.diff  # one line out, one line in
        old, new = changed[0][1:], changed[1][1:]
        assert re.sub(r"num_warps\s*=\s*[^,)]+", "num_warps=1", old) == new, m.diff
        assert m.rule == "timed_num_warps_1" and m.id.endswith(":timed_num_warps_1")


def test_an_earlier_calls_log_lines_are_reused_and_nothing_else(tmp_path):
    log = tmp_path / "mutgpu.log"
    log.write_text(
        "killed      3.0s a.py:1:2:rule [equivalent on CPU] ch01.x:bandwidth 71% of copy | needs 74%\n"
        "survived    4.0s b.py:3:4:rule [survived on CPU]  \n"
        "killed      1.0s c.py:5:6:rule [timed mutant on CPU] ch01.x:correctness wrong\n"
        "ch01_softmax on NVIDIA H100: 10 rechecked in 26 s\n")
    got = mutate._logged_outcomes(str(log), {"a.py:1:2:rule", "b.py:3:4:rule"})
    assert set(got) == {"a.py:1:2:rule", "b.py:3:4:rule"}  # c is not one of this run's mutants
    assert (got["a.py:1:2:rule"].status, got["a.py:1:2:rule"].by) == ("killed", "ch01.x:bandwidth")
    assert got["a.py:1:2:rule"].message.startswith("71% of copy")
    assert (got["b.py:3:4:rule"].status, got["b.py:3:4:rule"].by) == ("survived", "")


def _report(chapter: str, device: str = "NVIDIA Test GPU") -> dict:
    return {"chapter": chapter, "device": device, "mode": "gpu", "rechecked": 1, "errors": 0,
            "mutants": [{"id": f"{chapter}.py:1:2:rule", "cpu": "survived", "gpu": "killed"}]}


def test_writing_one_chapter_keeps_the_other_chapters_entries(tmp_path):
    path = mutate.gpu_report_path("NVIDIA Test GPU")
    assert path == os.path.join(mutate.REPORT_DIR, "gpu", "nvidia_test_gpu.json")
    path = str(tmp_path / "gpu" / os.path.basename(path))
    a, b = _report("ch02_a"), _report("ch01_b")
    mutate.write_chapter_entry(a, path, device=a["device"])
    mutate.write_chapter_entry(b, path, device=b["device"])
    doc = json.load(open(path))
    assert doc == {"device": "NVIDIA Test GPU", "chapters": {"ch01_b": b, "ch02_a": a}}
    assert list(doc["chapters"]) == ["ch01_b", "ch02_a"]  # sorted by chapter
    a2 = dict(a, rechecked=2)
    mutate.write_chapter_entry(a2, path, device=a2["device"])  # a chapter run again replaces only its own entry
    assert json.load(open(path))["chapters"] == {"ch01_b": b, "ch02_a": a2}
    assert os.listdir(tmp_path / "gpu") == ["nvidia_test_gpu.json"]  # no temporary file left behind


def test_the_cpu_file_keeps_the_other_chapters_entries(tmp_path, monkeypatch):
    path = str(tmp_path / "cpu.json")
    monkeypatch.setattr(mutate, "CPU_REPORT", path)
    assert mutate.cpu_report("ch01_b") is None
    a, b = {"chapter": "ch02_a", "mutants": 3, "killed": 3}, {"chapter": "ch01_b", "mutants": 2, "killed": 1}
    mutate.write_chapter_entry(a, path)
    mutate.write_chapter_entry(b, path)
    assert json.load(open(path)) == {"chapters": {"ch01_b": b, "ch02_a": a}}
    a2 = dict(a, killed=2)
    mutate.write_chapter_entry(a2, path)
    assert json.load(open(path)) == {"chapters": {"ch01_b": b, "ch02_a": a2}}
    assert (mutate.cpu_report("ch02_a"), mutate.cpu_report("ch01_b"), mutate.cpu_report("ch03")) == (a2, b, None)
    assert os.listdir(tmp_path) == ["cpu.json"]


def test_the_committed_cpu_file_holds_one_entry_per_chapter_under_its_name():
    doc = json.load(open(mutate.CPU_REPORT))
    assert set(doc) == {"chapters"} and doc["chapters"]
    assert list(doc["chapters"]) == sorted(doc["chapters"])
    for chapter, r in doc["chapters"].items():
        assert chapter in CHAPTERS and r["chapter"] == chapter


def test_the_committed_gpu_reports_hold_one_entry_per_chapter_that_agrees_with_its_rows():
    files = sorted(glob.glob(os.path.join(mutate.REPORT_DIR, "gpu", "*.json")))
    assert files
    for path in files:
        doc = json.load(open(path))
        assert set(doc) == {"device", "chapters"}, path
        assert os.path.basename(path) == os.path.basename(mutate.gpu_report_path(doc["device"]))
        for chapter, r in doc["chapters"].items():
            assert chapter in CHAPTERS and r["chapter"] == chapter and r["device"] == doc["device"]
            rows = r["mutants"]
            assert r["rechecked"] == len(rows)
            assert r["cpu_survivors_killed_here"] == sum(x["cpu"] == "survived" and x["gpu"] == "killed" for x in rows)
            assert r["cpu_equivalents_killed_here"] == sum(x["cpu"] == "equivalent" and x["gpu"] == "killed"
                                                           for x in rows)
            timed = [x for x in rows if x["cpu"] == "timed mutant"]
            assert (r["timed_mutants"], r["timed_mutants_killed"]) == (len(timed), sum(x["gpu"] == "killed"
                                                                                      for x in timed))
            assert r["errors"] == sum(x["gpu"] == "error" for x in rows)


def test_the_grading_doc_quotes_the_h100_recheck():
    doc = json.load(open(mutate.gpu_report_path("NVIDIA H100 80GB HBM3")))["chapters"].values()
    eq = sum(r["cpu_equivalents_killed_here"] for r in doc)
    timed, killed = sum(r["timed_mutants"] for r in doc), sum(r["timed_mutants_killed"] for r in doc)
    text = " ".join(open(os.path.join(mutate.ROOT, "docs", "how-grading-works.md")).read().split())
    assert f"On an H100: {eq} CPU \"equivalents\" were told apart" in text
    assert f"{killed} of {timed} timed mutants were killed" in text
