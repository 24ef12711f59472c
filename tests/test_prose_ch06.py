"""ch06_low_precision: the numbers its text quotes, against the data they come from (see test_prose.py)."""
from __future__ import annotations

from prose_util import *  # noqa: F403  (the chapters' text, its data files and the helpers that read them)


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
