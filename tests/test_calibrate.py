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
