"""How an exercise is declared: once, and read by test cells, benchmarks and tests.

An exercise names what the student defines (`entry`), how the grader calls it
(`run`, under the exercise's launch contract), the inputs (`cases`, `make_inputs`),
the float64 `reference`, the checks on the output (`verify`), and, for kernels, the
benchmark whose threshold lives in thresholds.toml: bandwidth as a fraction of a copy of the
same bytes, or (compute-bound kernels) throughput as a fraction of a PyTorch baseline, both
measured in the same grading run. A `memory` limit bounds what the submission may allocate.
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
    gpu_only: bool = False  # not graded in CPU mode (e.g. bf16 tl.dot, which the interpreter gets wrong)

    def shape_for(self, gpu: bool) -> tuple:
        return self.shape if gpu or self.cpu_shape is None else self.cpu_shape


@dataclass(frozen=True)
class Bench:
    shape: tuple
    nbytes: Callable[[tuple], int] | None  # bytes read + written (bandwidth benches)
    model: str  # the byte (or FLOP) formula, in words, shown next to the result
    max_fraction: float = 1.10  # above this fraction of the roofline the kernel must have skipped work
    flops: Callable[[tuple, str], float] | None = None  # (shape, kind) -> FLOPs: a throughput bench
    baseline: Callable | None = None  # (inputs) -> a call of PyTorch's op, timed in the same run
    baseline_name: str = ""
    kind: str = "adversarial"  # the benchmark's Case kind and dtype
    dtype: str = "float32"
    also: tuple = ()  # more shapes kernels_ref.bench measures (not graded)

    @property
    def check(self) -> str:
        return "throughput" if self.flops is not None else "bandwidth"


@dataclass(frozen=True)
class Memory:
    """At `case`, no tensor or array the submission allocates (and, on a GPU, no peak of the
    device's allocated memory during its call) may reach limit(shape) bytes."""
    case: Case
    limit: Callable[[tuple], int]
    what: str  # what the limit keeps out, in words, for the message
    verify: Callable | None = None  # the output's check before measuring (default: the exercise's)


@dataclass(frozen=True)
class Edge:
    """An edge class an exercise's quiet checks must grade (tests/test_mutation.py checks that some case,
    in CPU mode and on a GPU, covers each one): the widths at a code path's boundary, a row kind that
    triggers a guard, a dtype. A case covers the edge if its last dimension is one of `widths` (any
    width if none given), its kind contains one of `kinds`, its dtype is one of `dtypes` (any if
    none given) and it has at least `min_rows` rows. `why`: what a kernel gets wrong there, in words
    (many were found by mutation testing)."""
    name: str
    why: str
    widths: tuple = ()
    kinds: tuple = ()
    dtypes: tuple = ()
    min_rows: int = 0  # the case has at least this many rows (e.g. every row kind of a cycle present)

    def covered_by(self, case: Case, gpu: bool) -> bool:
        shape = case.shape_for(gpu)
        return ((not self.widths or shape[-1] in self.widths) and shape[0] >= self.min_rows
                and (not self.kinds or any(k in case.kind for k in self.kinds))
                and (not self.dtypes or case.dtype in self.dtypes) and (gpu or not case.gpu_only))


TIMED_CHECKS = ("bandwidth", "throughput")


@dataclass(frozen=True)
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
    # compute capability every case needs (beyond its dtype's, see grading.NEEDS_CAPABILITY), e.g. (8, 9)
    # for an exercise whose kernel writes fp8; a GPU below it grades none of the exercise's checks
    min_capability: tuple = ()
    chapter: str = ""
    harness_kernels: tuple[str, ...] = ()  # the grader's own test kernels (around device functions)
    memory: Memory | None = None
    edges: tuple[Edge, ...] = ()  # edge classes its quiet checks must cover (see Edge)
    # checks of the submission's text the judge makes itself, never executing it, before any check of this
    # exercise (names in autograder.judge.source_checks.CHECKS); a problem fails every check of the exercise
    source_checks: tuple[str, ...] = ()

    def uncovered_edges(self, gpu: bool) -> list[str]:
        cases = [c for check, cs in self.cases.items() for c in cs]
        return [e.name for e in self.edges if not any(e.covered_by(c, gpu) for c in cases)]

    @property
    def checks(self) -> list[str]:
        names = list(self.cases)
        if self.memory is not None:
            names.append("memory")
        if self.bench is not None:
            names.append(self.bench.check)
        return names


def grade_id_for(exercise_id: str, check: str) -> str:
    """grade_id of the test cell that runs `check` of an exercise (one convention, used everywhere)."""
    short = exercise_id.split(".", 1)[1]
    return f"test_{short}" if check == "correctness" else f"test_{short}_{check}"
