"""The one registry of exercises, and the speed thresholds (thresholds.toml)."""
from __future__ import annotations

import os
import threading
import tomllib

from autograder.declare.exercise import Exercise

_EXERCISES: dict[str, Exercise] = {}
# Exercises that moved to another chapter: the id measurement records made before the move name them by. Chapter 6's
# cross-entropy became Chapter 7's Exercise 1 when Chapter 6 was split (the kernel and its checks are unchanged).
FORMER_IDS = {"ch06.cross_entropy_triton": "ch07.cross_entropy_triton"}
THRESHOLDS_FILE = os.path.join(os.path.dirname(__file__), "thresholds.toml")


def _add(exercises) -> None:
    for ex in exercises:
        if ex.id in _EXERCISES:
            raise ValueError(f"exercise {ex.id} declared twice")
        _EXERCISES[ex.id] = ex


_LOADED = threading.Event()
_LOCK = threading.Lock()


def _load() -> None:
    """Import the chapters' declarations once. Thread-safe: the nbgrader plugin asks from a thread
    pool, and a thread must not see the registry half-filled while another is importing it."""
    if _LOADED.is_set():
        return
    with _LOCK:
        if not _LOADED.is_set():
            import importlib
            import pkgutil

            from autograder.declare import exercises
            # one module per chapter, in chapter order; each exports its exercises, none registers itself
            for m in sorted(pkgutil.iter_modules(exercises.__path__), key=lambda m: m.name):
                _add(importlib.import_module(f"{exercises.__name__}.{m.name}").EXERCISES)
            _LOADED.set()


def get(exercise_id: str) -> Exercise:
    _load()
    try:
        return _EXERCISES[exercise_id]
    except KeyError:
        raise KeyError(f"unknown exercise {exercise_id!r}; known: {', '.join(sorted(_EXERCISES))}") from None


def all_exercises() -> list[Exercise]:
    _load()
    return list(_EXERCISES.values())


def thresholds() -> dict:
    with open(THRESHOLDS_FILE, "rb") as f:
        return tomllib.load(f)


CALIBRATED_DIR = os.path.join(os.path.dirname(THRESHOLDS_FILE), "thresholds.d")


def calibrated(device: str, directory: str = CALIBRATED_DIR) -> dict:
    """The bars `flashcourse calibrate` wrote for this GPU model (empty if none)."""
    if not device or not os.path.isdir(directory):
        return {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".toml"):
            with open(os.path.join(directory, name), "rb") as f:
                t = tomllib.load(f)
            if t.get("device") == device:
                return t
    return {}


def _own_bar(exercise_id: str, check: str, device: str | None) -> tuple[str, dict]:
    """The threshold's key for this check, and this GPU model's calibrated entry for the exercise (or {})."""
    key = {"bandwidth": "min_fraction_of_copy", "throughput": "min_fraction_of_baseline"}[check]
    if device is None:
        from course import mode
        device = mode.device_name() if mode.GPU else ""
    return key, calibrated(device).get(exercise_id, {})


def calibrated_here(exercise_id: str, check: str = "bandwidth", device: str | None = None) -> bool:
    """Whether threshold_for's bar is one calibrated for this GPU model (thresholds.d) rather than the shipped one."""
    key, own = _own_bar(exercise_id, check, device)
    return key in own


def awaits_calibration(exercise_id: str, check: str = "bandwidth", device: str | None = None) -> bool:
    """Whether the exercise's speed bar was never measured on a GPU (`awaits_calibration = true` in thresholds.toml,
    no bar number there) and none was calibrated for this GPU model: then its timed check is not graded, said so."""
    key, own = _own_bar(exercise_id, check, device)
    return key not in own and bool(thresholds().get(exercise_id, {}).get("awaits_calibration"))


def threshold_for(exercise_id: str, check: str = "bandwidth", device: str | None = None) -> float:
    """The minimum fraction: of the copy bandwidth (bandwidth), of PyTorch's TFLOP/s (throughput): the bar
    calibrated for this GPU model where `flashcourse calibrate` wrote one, else the shipped one."""
    key, own = _own_bar(exercise_id, check, device)
    if key in own:
        return float(own[key])
    t = thresholds().get(exercise_id)
    if t is None or key not in t:
        raise KeyError(f"no {check} threshold ({key}) for {exercise_id} in thresholds.toml")
    return float(t[key])
