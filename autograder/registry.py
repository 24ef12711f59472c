"""The one registry of exercises, and the bandwidth thresholds (thresholds.toml)."""
from __future__ import annotations

import os
import tomllib

from .exercise import Exercise

_EXERCISES: dict[str, Exercise] = {}
THRESHOLDS_FILE = os.path.join(os.path.dirname(__file__), "thresholds.toml")


def register(*exercises: Exercise) -> None:
    for ex in exercises:
        if ex.id in _EXERCISES:
            raise ValueError(f"exercise {ex.id} declared twice")
        _EXERCISES[ex.id] = ex


def _load() -> None:
    if not _EXERCISES:
        from .exercises import ch01_softmax, ch02_reductions, ch03_online_softmax  # noqa: F401


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


def threshold_for(exercise_id: str) -> float:
    t = thresholds().get(exercise_id)
    if t is None or "min_fraction_of_copy" not in t:
        raise KeyError(f"no bandwidth threshold for {exercise_id} in thresholds.toml")
    return float(t["min_fraction_of_copy"])
