"""The runner's operations in the caller's own process: for code the caller trusts (reference kernels).

Benchmarks and tests hand one to the judge (autograder.judge.grading.run_check(ex, check, LocalRunner(ns),
seed)); a submission is never run this way (autograder.judge.session.Session starts a sandboxed runner).
"""
from __future__ import annotations

from autograder.declare.exercise import Exercise
from autograder.runner import execute


class LocalRunner:
    """The runner's operations, in this process: for code the judge trusts (reference kernels)."""

    def __init__(self, ns: dict):
        self.ns = ns

    def run(self, ex: Exercise, inputs: dict, do_audit: bool) -> dict:
        execute.precheck(ex, self.ns)
        return execute.op_run(ex, self.ns, inputs, do_audit)

    def bench_prepare(self, ex: Exercise, sets: list, audited: bool = True) -> dict:
        execute.precheck(ex, self.ns)
        return execute.op_bench_prepare(ex, self.ns, sets, audited)

    def ping(self) -> float:
        return 0.0

    def bench_go(self, ex: Exercise, rounds: int) -> None:
        execute.op_bench_go(ex, rounds)

    def bench_collect(self, ex: Exercise) -> dict:
        return execute.op_bench_collect(ex)

    def seal(self) -> bool:  # trusted code in this process: its outputs are not in a lent arena
        return False

    def unseal(self) -> None:
        return None

    def memory(self, ex: Exercise, inputs: dict) -> dict:
        execute.precheck(ex, self.ns)
        return execute.op_memory(ex, self.ns, inputs)
