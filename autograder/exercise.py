"""How an exercise is declared: once, and read by test cells, benchmarks and tests.

An exercise names what the student defines (`entry`), how the grader calls it
(`run`, under the exercise's launch contract), the inputs (`cases`, `make_inputs`),
the float64 `reference`, the checks on the output (`verify`), and, for kernels, the
bandwidth benchmark whose threshold lives in thresholds.toml.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Case:
    shape: tuple
    kind: str = "randn"
    cpu_shape: tuple | None = None  # smaller stand-in where the Triton interpreter would be too slow
    dtype: str = "float32"  # the input's dtype

    def shape_for(self, gpu: bool) -> tuple:
        return self.shape if gpu or self.cpu_shape is None else self.cpu_shape


@dataclass(frozen=True)
class Bench:
    shape: tuple
    nbytes: Callable[[tuple], int]
    model: str  # the byte formula, in words, shown next to the result
    max_fraction: float = 1.10  # above this fraction of copy the kernel must have skipped work


@dataclass
class Exercise:
    id: str
    title: str
    entry: tuple[str, ...]
    kind: str  # "python" | "triton" | "cuda"
    spec: str  # signature and launch contract, shown in failure messages and docs
    cases: dict[str, list[Case]]
    make_inputs: Callable  # (case, shape, generator, device) -> dict of tensors/arrays
    reference: Callable  # (inputs) -> float64 output (numpy)
    run: Callable  # (namespace, inputs, outputs_factory) -> output
    verify: Callable  # (out, ref, inputs, case) -> list[str] problems
    solution: str = ""  # reference solution file, relative to the repo root (kernels_ref/...)
    bench: Bench | None = None
    needs_gpu: bool = False  # CUDA exercises: CPU mode compiles them but cannot run them
    timeout_s: dict = field(default_factory=lambda: {"cpu": 180, "gpu": 120})
    chapter: str = ""
    harness_kernels: tuple[str, ...] = ()  # the grader's own test kernels (around device functions)

    @property
    def checks(self) -> list[str]:
        names = list(self.cases)
        if self.bench is not None:
            names.append("bandwidth")
        return names


def grade_id_for(exercise_id: str, check: str) -> str:
    """grade_id of the test cell that runs `check` of an exercise (one convention, used everywhere)."""
    short = exercise_id.split(".", 1)[1]
    return f"test_{short}" if check == "correctness" else f"test_{short}_{check}"
