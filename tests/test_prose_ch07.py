"""ch07_cross_entropy: the numbers its text quotes, against the data they come from (see test_prose.py)."""
from __future__ import annotations

import os
import tomllib

from prose_util import *  # noqa: F403  (the chapters' text, its data files and the helpers that read them)

H100_BENCH = "benchmarks/gpu_2026-11-23_s4/bench_ch06.json"   # the grader's own timing, H100
H200_BENCH = "benchmarks/gpu_2026-11-26_s5/bench_ch06_h200.json"  # the same, H200
LCE_BENCH = "benchmarks/evidence/bench_h200_2026-12-03.json"  # Exercise 2 on the H200 (what calibrate read)
# Those runs measured the cross-entropy while it was Chapter 6's Exercise 4: they name it by its former id.
FORMER = "ch06.cross_entropy_triton"
EX = "ch07.cross_entropy_triton"
CE_VARIANTS = {"two passes": "wrong/variant_triton_ce_no_cache_hints", "+ L2 hints": "reference",
               "three passes": "wrong/triton_ce_three_passes", "base 2": "wrong/variant_triton_ce_exp2"}


def _pct(rel: str, device: str, exercise: str, shape: list, variant: str) -> float:
    data = load(rel)
    assert data["device"].startswith(device), data["device"]
    rows = [r for r in data["rows"] if r["exercise"] == exercise and r["shape"] == shape and r["variant"] == variant]
    assert len(rows) == 1, (rel, exercise, shape, variant)
    return round(100 * rows[0]["fraction"], 1)


def _bar(ex: str, key: str, h200: bool = False) -> float:
    path = ("autograder", "declare", "thresholds.d", "nvidia_h200.toml") if h200 else \
        ("autograder", "declare", "thresholds.toml")
    with open(os.path.join(ROOT, *path), "rb") as f:
        return tomllib.load(f)[ex][key]


def test_ch07_cross_entropy_table():
    """Section 4's table: H100 and H200, three shapes, two passes / + L2 hints / three passes, grader's timing."""
    body = flat("ch07_cross_entropy")
    for rows, cols, label in ((4096, 32768, "4096 × 32 768"), (2048, 131072, "2048 × 131 072"),
                              (1024, 262144, "1024 × 262 144")):
        m = re.search(re.escape(label) + r" \(\d+ KiB rows\) \| " + r" \| ".join([r"([\d.]+)%"] * 6) + r" \|", body)
        assert m, label
        got = [float(g) for g in m.groups()]
        want = [_pct(rel, dev, FORMER, [rows, cols], CE_VARIANTS[v])
                for rel, dev in ((H100_BENCH, "NVIDIA H100"), (H200_BENCH, "NVIDIA H200"))
                for v in ("two passes", "+ L2 hints", "three passes")]
        assert got == want, (label, got, want)


def test_ch07_base2_and_exercise_1_bars():
    a, b = quoted("ch07_cross_entropy", r"took the hinted kernel from ([\d.]+)% to ([\d.]+)% on the H200 at 1024 × 262 144")
    ex, shape = FORMER, [1024, 262144]
    assert (a, b) == (_pct(H200_BENCH, "NVIDIA H200", ex, shape, "reference"),
                      _pct(H200_BENCH, "NVIDIA H200", ex, shape, CE_VARIANTS["base 2"]))
    two, three, bar, two200, three200, bar200 = quoted(
        "ch07_cross_entropy", r"without cache hints \(([\d.]+)% on an H100\), three passes about \$1/2\$ \(([\d.]+)%\); "
        r"the bar, (\d+)%, is between\. On an H200, where the SMs rather than the memory set the pace, the same "
        r"kernels measure ([\d.]+)% and ([\d.]+)% of its copy, so its bar is ([\d.]+)%")
    assert two == _pct(H100_BENCH, "NVIDIA H100", ex, shape, CE_VARIANTS["two passes"])
    assert three == _pct(H100_BENCH, "NVIDIA H100", ex, shape, CE_VARIANTS["three passes"])
    assert two200 == _pct(H200_BENCH, "NVIDIA H200", ex, shape, CE_VARIANTS["two passes"])
    assert three200 == _pct(H200_BENCH, "NVIDIA H200", ex, shape, CE_VARIANTS["three passes"])
    assert round(100 * _bar(EX, "min_fraction_of_copy")) == bar
    assert round(100 * _bar(EX, "min_fraction_of_copy", h200=True), 1) == bar200


def test_ch07_exercise_2_memory_and_throughput_bars():
    """Section 7: the memory case, its limit (an eighth of the float32 logits) and the throughput bar, as declared."""
    from autograder.declare import registry
    ex = registry.get("ch07.linear_cross_entropy_triton")
    body = flat("ch07_cross_entropy")
    n, h, v = ex.memory.case.shape
    assert "The memory test runs $N = 4096$, $H = 64$, $V = 32\\,768$ in `float16`" in body
    assert (n, h, v) == (4096, 64, 32768) and ex.memory.case.dtype == "float16"
    assert ex.memory.limit((n, h, v)) == 4 * n * v // 8 == 64 << 20
    assert "The limit is **an eighth of the logits**, 64 MiB" in body and "= 512 MiB" in body
    assert "fewer than $N/8 = 512$ rows" in body
    cn, ch, cv = ex.memory.case.cpu_shape
    assert f"In CPU mode the test runs ${cn} \\times {ch} \\times {cv}$, with a limit of 1 MiB" in body
    assert ex.memory.limit((cn, ch, cv)) == 1 << 20
    # the H200's bar and the two measurements the text quotes, from the bench file that calibration read
    ref, bar, slow = quoted("ch07_cross_entropy", r"On an H200 the reference solution ran at ([\d.]+) of PyTorch's path"
                            r" \(about \d+ TFLOP/s\) and the bar there is ([\d.]+); the same kernel with two warps per"
                            r" program instead of eight ran at ([\d.]+) and fails it")
    shape = list(ex.bench.shape)
    assert ref == round(_pct(LCE_BENCH, "NVIDIA H200", ex.id, shape, "reference") / 100, 2)
    assert slow == round(_pct(LCE_BENCH, "NVIDIA H200", ex.id, shape, "wrong/triton_lce_two_warps") / 100, 2)
    assert bar == round(_bar(ex.id, "min_fraction_of_baseline", h200=True), 2) and slow < bar < ref
    tflops = [r["tflops"] for r in load(LCE_BENCH)["rows"] if r["exercise"] == ex.id and r["shape"] == shape
              and r["variant"] == "reference"]
    assert f"(about {round(tflops[0])} TFLOP/s)" in body
    # a GPU model with no measured bar: the check is not graded there, as the text says, and the judge agrees
    assert "On a GPU model whose bar has not been measured the check is not graded" in body
    assert registry.awaits_calibration(ex.id, "throughput", device="NVIDIA H100 80GB HBM3")
    assert not registry.awaits_calibration(ex.id, "throughput", device="NVIDIA H200")
    assert tuple(ex.bench.shape) == (8192, 4096, 131072)
    assert "$N = 8192$, $H = 4096$, $V = 2^{17}$ in `bfloat16`" in body
