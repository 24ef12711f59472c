"""`flashcourse calibrate`: bars for another GPU model from a benchmark run there (here: the recorded H100 run,
and a slower GPU made from it by scaling), and the judge using them only on a GPU of that name."""
import copy
import json
import os

from autograder import calibrate, registry

H100 = os.path.join(os.path.dirname(registry.THRESHOLDS_FILE), "..", "benchmarks", "grading_v2_bench_h100.json")


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
    lowered = [e for e in calibrate.bars(b) if e["bar"] < e["shipped"]]
    assert lowered, "a GPU 30% further from its copy bandwidth must get lower bars"
    for e in lowered:
        assert own[e["exercise"]][e["key"]] == e["bar"]
        assert e["reference"] / e["bar"] >= 1.1 - 1e-9
    assert registry.calibrated("NVIDIA H100 80GB HBM3", str(tmp_path)) == {}
    shipped = registry.threshold_for("ch01.softmax_triton", "bandwidth", device="some other GPU")
    assert shipped == registry.thresholds()["ch01.softmax_triton"]["min_fraction_of_copy"]


H200_SOURCE = "benchmarks/evidence/ch06_bench_h200_2026-11-26.json"
H200_CH06 = os.path.join(os.path.dirname(registry.THRESHOLDS_FILE), "..", H200_SOURCE)


def test_legitimate_variants_must_pass_the_calibrated_bar_and_the_known_slow_must_fail_it():
    """The recorded H200 run of chapter 6: the cross-entropy's shipped bar (0.58, set on an H100) fails the two
    passes without cache hints there (0.558), a legitimate variant; the calibrated bar passes it and still
    fails three passes (0.473)."""
    with open(H200_CH06) as f:
        b = json.load(f)
    (ce,) = [e for e in calibrate.bars(b) if e["exercise"] == "ch06.cross_entropy_triton"]
    assert ce["variants"]["variant_triton_ce_no_cache_hints"] < ce["shipped"]
    assert ce["slow"] < ce["bar"] < min(ce["variants"].values()) and ce["bar"] < ce["reference"]
    assert "warning" not in ce
    for e in calibrate.bars(b):
        assert e["bar"] <= e["shipped"] + 1e-9
        for v in e["variants"].values():
            assert v >= e["bar"], e


def test_the_shipped_h200_bars_are_what_calibrate_writes_from_the_recorded_run(tmp_path):
    shipped = os.path.join(calibrate.DIR, "nvidia_h200.toml")
    with open(H200_CH06) as f:
        path = calibrate.write(json.load(f), str(tmp_path), source=H200_SOURCE)
    assert open(path).read() == open(shipped).read(), "regenerate: flashcourse calibrate --bench " + H200_SOURCE
    assert registry.threshold_for("ch06.cross_entropy_triton", "bandwidth", device="NVIDIA H200") == 0.516
    assert registry.threshold_for("ch06.cross_entropy_triton", "bandwidth", device="NVIDIA H100 80GB HBM3") == 0.58
    assert (registry.threshold_for("ch01.softmax_triton", "bandwidth", device="NVIDIA H200")
            == registry.thresholds()["ch01.softmax_triton"]["min_fraction_of_copy"])  # not measured: shipped


def test_the_feedback_reads_the_bar_of_the_gpu_the_check_ran_on():
    from autograder.feedback import speed_of
    msg = ("2315 GB/s = 56% of the copy bandwidth (4134 GB/s) at (1024, 262144) randn-dense bfloat16 on {dev}; "
           "judge's clock, 40 rounds x 2 input sets, message overhead 0.02%; bytes = 2 · rows · V · 2 B; "
           "needs >= {need}")
    check = {"exercise": "ch06.cross_entropy_triton", "check": "bandwidth"}
    h200 = speed_of(dict(check, message=msg.format(dev="NVIDIA H200", need="51.6% (the bar calibrated for this "
                                                                            "GPU model)")), "cpu")
    h100 = speed_of(dict(check, message=msg.format(dev="NVIDIA H100 80GB HBM3", need="58.0%")), "cpu")
    assert (h200["need"], h200["device"]) == (0.516, "NVIDIA H200")
    assert (h100["need"], h100["device"]) == (0.58, "NVIDIA H100 80GB HBM3")
