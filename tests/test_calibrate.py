"""`flashcourse calibrate`: bars for another GPU model from a benchmark run there (here: the recorded H100 run,
and a slower GPU made from it by scaling), and the judge using them only on a GPU of that name."""
import copy
import json
import os

from autograder.instructor import calibrate
from autograder.declare import registry
from autograder.layout import ROOT

H100 = os.path.join(ROOT, "benchmarks", "grading_v2_bench_h100.json")


def _bench(device: str, scale: float) -> dict:
    with open(H100) as f:
        b = json.load(f)
    b = copy.deepcopy(b)
    b["device"] = device
    for r in b["rows"]:
        if "fraction" in r:
            r["fraction"] *= scale  # every kernel a little further from the copy (simulated)
    return b


def test_on_the_gpu_the_bars_were_set_on_nothing_is_raised_and_the_known_slow_still_fail():
    for e in calibrate.bars(_bench("NVIDIA H100 80GB HBM3", 1.0)):
        if e["shipped"] is None:  # awaits calibration; the recorded run did not measure it
            assert e["reference"] is None and e["bar"] is None, e
            continue
        assert e["bar"] <= e["shipped"] + 1e-9, e
        if e["reference"] is not None:
            assert e["reference"] / e["bar"] >= 1.1, e  # the reference keeps a margin
        if e["slow"] is not None:
            assert e["bar"] > e["slow"], e


def test_a_slower_gpu_gets_lower_bars_used_only_on_that_gpu(tmp_path):
    b = _bench("NVIDIA L4 (simulated)", 0.7)
    path = calibrate.write(b, str(tmp_path))
    text = open(path).read()
    assert 'device = "NVIDIA L4 (simulated)"' in text and "measured: reference" in text
    own = registry.calibrated("NVIDIA L4 (simulated)", str(tmp_path))
    lowered = [e for e in calibrate.bars(b) if e["shipped"] is not None and e["bar"] < e["shipped"]]
    assert lowered, "a GPU 30% further from its copy bandwidth must get lower bars"
    for e in lowered:
        assert own[e["exercise"]][e["key"]] == e["bar"]
        assert e["reference"] / e["bar"] >= 1.1 - 1e-9
    assert registry.calibrated("NVIDIA H100 80GB HBM3", str(tmp_path)) == {}
    shipped = registry.threshold_for("ch01.softmax_triton", "bandwidth", device="some other GPU")
    assert shipped == registry.thresholds()["ch01.softmax_triton"]["min_fraction_of_copy"]


H200_SOURCE = "benchmarks/evidence/bench_h200_2026-12-03.json"  # ch06-07 (11-26), LCE and ch08 (12-03)
H200_CH06 = os.path.join(ROOT, H200_SOURCE)


def test_legitimate_variants_must_pass_the_calibrated_bar_and_the_known_slow_must_fail_it():
    """The recorded H200 run of chapter 6 (its cross-entropy, ch06.cross_entropy_triton then, is Chapter 7's now:
    registry.FORMER_IDS): the cross-entropy's shipped bar (0.58, set on an H100) fails the two passes without cache
    hints there (0.558), a legitimate variant; the calibrated bar passes it and still
    fails three passes (0.473)."""
    with open(H200_CH06) as f:
        b = json.load(f)
    (ce,) = [e for e in calibrate.bars(b) if e["exercise"] == "ch07.cross_entropy_triton"]
    assert ce["variants"]["variant_triton_ce_no_cache_hints"] < ce["shipped"]
    assert ce["slow"] < ce["bar"] < min(ce["variants"].values()) and ce["bar"] < ce["reference"]
    assert "warning" not in ce
    for e in calibrate.bars(b):
        if e["shipped"] is None:
            continue
        assert e["bar"] <= e["shipped"] + 1e-9
        for v in e["variants"].values():
            assert v >= e["bar"], e


def test_the_shipped_h200_bars_are_what_calibrate_writes_from_the_recorded_run(tmp_path):
    shipped = os.path.join(calibrate.DIR, "nvidia_h200.toml")
    with open(H200_CH06) as f:
        path = calibrate.write(json.load(f), str(tmp_path), source=H200_SOURCE)
    assert open(path).read() == open(shipped).read(), "regenerate: flashcourse calibrate --bench " + H200_SOURCE
    assert registry.threshold_for("ch07.cross_entropy_triton", "bandwidth", device="NVIDIA H200") == 0.516
    assert registry.threshold_for("ch07.cross_entropy_triton", "bandwidth", device="NVIDIA H100 80GB HBM3") == 0.58
    assert (registry.threshold_for("ch01.softmax_triton", "bandwidth", device="NVIDIA H200")
            == registry.thresholds()["ch01.softmax_triton"]["min_fraction_of_copy"])  # not measured: shipped


def test_the_feedback_draws_the_bar_the_judge_applied_on_its_gpu():
    """The judge records the bar it applied (calibrated for an H200, shipped for an H100) in the measurement; the
    student's sentence and chart show that bar, never one looked up again."""
    from autograder.instructor import feedback
    from autograder.judge import grading
    ex = registry.get("ch07.cross_entropy_triton")
    m = {"gbps": 2315.0, "copy_gbps": 4134.0, "fraction": 2315.0 / 4134.0, "shape": [1024, 262144], "ms": 1.0,
         "model": "2 · rows · V · 2 B", "rounds": 40, "sets": 2, "overhead": 0.0002, "graph": True}
    for device, bar in (("NVIDIA H200", 0.516), ("NVIDIA H100 80GB HBM3", 0.58)):
        need = registry.threshold_for(ex.id, "bandwidth", device=device)
        calibrated = registry.calibrated_here(ex.id, "bandwidth", device=device)
        measured = grading.measurement(ex, dict(m, device=device), need, calibrated)
        assert (measured.need, measured.device, measured.calibrated) == (bar, device, device == "NVIDIA H200")
        assert f"needs >= {100 * bar:.1f}%" in measured.render()
        _, alt = feedback.speed_chart(ex.id, "bandwidth", measured, True)
        assert f"the bar ({100 * bar:.0f}% of copy): {bar * 4134:.0f} GB/s" in alt, alt


def test_an_exercise_awaiting_calibration_gets_its_bar_from_the_measurement_alone(tmp_path):
    """No shipped bar to cap it: bar = the slower of reference and variants / 1.3, or the middle when that would pass
    the known-slow kernel; the judge then grades the check on that GPU only."""
    ex = "ch08.softmax_backward_triton"
    assert registry.awaits_calibration(ex, device="GPU X")
    shape = list(registry.get(ex).bench.shape)
    rows = [{"exercise": ex, "shape": shape, "variant": "reference", "fraction": 0.91},
            {"exercise": ex, "shape": shape, "variant": "wrong/slow_kernel", "fraction": 0.40}]
    (e,) = [e for e in calibrate.bars({"device": "GPU X", "rows": rows}) if e["exercise"] == ex]
    assert e["shipped"] is None and abs(e["bar"] - 0.7) < 1e-9, e
    rows[1]["fraction"] = 0.8  # 0.91 / 1.3 = 0.7 would pass it: the middle
    (e,) = [e for e in calibrate.bars({"device": "GPU X", "rows": rows}) if e["exercise"] == ex]
    assert abs(e["bar"] - round((0.8 + 0.91) / 2, 3)) < 1e-9, e
    path = calibrate.write({"device": "GPU X", "rows": rows}, str(tmp_path))
    text = open(path).read()
    assert "shipped none" in text and f'["{ex}"]' in text
    assert registry.calibrated("GPU X", str(tmp_path))[ex]["min_fraction_of_copy"] == e["bar"]
