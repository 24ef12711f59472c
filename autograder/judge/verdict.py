"""A check's verdict and a timed check's measurement, as data: the judge fills them, everyone else reads the fields.

The sentence a student reads is `Verdict.render()`, made from the fields; no code reads a verdict back out of its
sentence. Result files hold `Verdict.to_json()` (autograder.instructor.classgrade), read back with `Verdict.from_json`.
"""
from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, replace


class Kind(enum.Enum):
    """What became of a check."""
    PASSED = "passed"
    FAILED = "failed"  # the judge's finding: wrong, too slow, too much memory; or the code raised, is missing, tampered
    NOT_IMPLEMENTED = "not_implemented"  # the exercise still holds its stub: 0 points, as a failure
    NOT_GRADED = "not_graded"  # this machine cannot grade it (no GPU, or one too old): 0 points, said aloud
    TIMED_OUT = "timed_out"  # it (or an earlier check of its exercise, or loading its cell) ran out of time
    DIED = "died"  # the runner's process died, or broke the protocol, before the check was done


ATTENTION = (Kind.TIMED_OUT, Kind.DIED)  # kinds an instructor is told about beside the grade


@dataclass(frozen=True)
class Measurement:
    """A timed check's numbers, as the judge measured them on its own clock and applied its bar."""
    unit: str  # "GB/s" (a bandwidth check) or "TFLOP/s" (a throughput check)
    value: float  # the submission's speed, in unit
    roof: float  # the roofline measured in the same run, in unit: the copy bandwidth, or PyTorch's baseline
    roof_name: str  # "copy bandwidth", or the baseline's name (e.g. "PyTorch SDPA (flash backend)")
    fraction: float  # value / roof
    need: float  # the exact bar the judge applied (a fraction of roof)
    calibrated: bool  # whether that bar is the one calibrated for this GPU model (thresholds.d)
    device: str  # the GPU's name
    shape: tuple  # the benchmark shape
    case: str  # the inputs' kind at that shape (e.g. "adversarial")
    dtype: str
    model: str  # what was counted: the bytes (bandwidth) or the FLOPs (throughput) formula
    ms: float  # milliseconds per call, the judge's clock
    rounds: int
    sets: int  # input sets, each call cold in L2
    overhead: float  # a message round trip, as a fraction of the timed batch (included, never subtracted)
    graph: bool  # the submission's calls were captured in a CUDA graph (else: plain launches)

    def render(self) -> str:
        at = (f"at {tuple(self.shape)} {self.case} {self.dtype} on {self.device}; judge's clock, {self.rounds} rounds "
              f"x {self.sets} input sets, message overhead {100 * self.overhead:.2f}%"
              + ("" if self.graph else ", plain launches (your wrapper could not be captured in a CUDA graph)"))
        whose = " (the bar calibrated for this GPU model)" if self.calibrated else ""
        if self.unit == "GB/s":
            return (f"{self.value:.0f} GB/s = {100 * self.fraction:.0f}% of the {self.roof_name} ({self.roof:.0f} "
                    f"GB/s) {at}; bytes = {self.model}; needs >= {100 * self.need:.1f}%{whose}")
        return (f"{self.value:.0f} TFLOP/s = {self.fraction:.2f}x {self.roof_name} ({self.roof:.0f} TFLOP/s, same "
                f"run) {at}; FLOPs = {self.model}; needs >= {self.need:.2f}x{whose}")

    def to_json(self) -> dict:
        return dict(asdict(self), shape=list(self.shape))

    @classmethod
    def from_json(cls, d: dict) -> Measurement:
        return cls(**dict(d, shape=tuple(d["shape"])))


@dataclass(frozen=True)
class Verdict:
    """One check of one exercise: what became of it (kind), what the judge or the grader said (detail), the
    measurement of a timed check, the seed of the inputs a failure was found on, and the seconds it took."""
    exercise: str
    check: str
    kind: Kind
    detail: str = ""
    measurement: Measurement | None = None
    seed: int | None = None  # said after a failure the judge found (the inputs can be drawn again)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.kind is Kind.PASSED

    def render(self) -> str:
        """The sentence the student reads."""
        parts = [self.measurement.render()] if self.measurement is not None else []
        if self.detail:
            parts.append(self.detail)
        text = ": ".join(parts)
        if self.kind is Kind.NOT_GRADED:
            text = "not graded: " + text
        return text + (f" (seed {self.seed})" if self.seed is not None else "")

    @property
    def message(self) -> str:  # the sentence, for code that prints it (tests, benchmark scripts)
        return self.render()

    def to_json(self, limit: int | None = None) -> dict:
        """For result files; `limit` cuts a long detail. "message" is the rendered sentence, for people reading the
        file: code reads the fields."""
        v = replace(self, detail=self.detail[:limit]) if limit is not None else self
        return {"exercise": v.exercise, "check": v.check, "kind": v.kind.value, "passed": v.passed,
                "detail": v.detail, "measurement": v.measurement.to_json() if v.measurement else None,
                "seed": v.seed, "seconds": round(v.seconds, 3), "message": v.render()}

    @classmethod
    def from_json(cls, d: dict) -> Verdict:
        m = d.get("measurement")
        return cls(str(d["exercise"]), str(d["check"]), Kind(d["kind"]), str(d.get("detail", "")),
                   Measurement.from_json(m) if m else None, d.get("seed"), float(d.get("seconds", 0.0)))


def passed(exercise: str, check: str, detail: str = "", measurement: Measurement | None = None) -> Verdict:
    return Verdict(exercise, check, Kind.PASSED, detail, measurement)


def failed(exercise: str, check: str, detail: str, measurement: Measurement | None = None) -> Verdict:
    return Verdict(exercise, check, Kind.FAILED, detail, measurement)


def not_graded(exercise: str, check: str, why: str) -> Verdict:
    return Verdict(exercise, check, Kind.NOT_GRADED, why)


NEEDS_GPU = "needs a GPU (this machine has none; grade on a GPU machine to score it)"  # a timed check, graded on CPU
