"""Run a check in a fresh worker process with a timeout: a crash, a hang or a
corrupted CUDA context costs that check and nothing else."""
from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from course import mode

from . import registry
from .submission import Cell
from .worker import RESULT_TAG

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class CheckResult:
    exercise: str
    check: str
    passed: bool
    message: str
    seconds: float


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["FLASHCOURSE_MODE"] = mode.MODE
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def run_check(exercise_id: str, check: str, cells: list[Cell], *, seed: int | None = None,
              timeout: float | None = None) -> CheckResult:
    ex = registry.get(exercise_id)
    if check not in ex.checks:
        raise KeyError(f"{exercise_id} has no check {check!r}; it has {', '.join(ex.checks)}")
    seed = secrets.randbelow(2**31) if seed is None else seed
    timeout = timeout or ex.timeout_s[mode.MODE]
    job = json.dumps({"exercise": exercise_id, "check": check, "seed": seed,
                      "cells": [c.to_json() for c in cells]})
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "autograder.worker"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                            cwd=ROOT, start_new_session=True)
    try:
        out, err = proc.communicate(job, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return CheckResult(exercise_id, check, False,
                           f"timed out after {timeout:.0f} s and was stopped: an endless loop (a loop bound "
                           "that never grows? a mask that never ends the loop?), a deadlock (a "
                           "__syncthreads() or a shuffle that not every named thread reaches), or a "
                           "kernel far too slow", time.perf_counter() - t0)
    took = time.perf_counter() - t0
    for line in reversed(out.splitlines()):
        if line.startswith(RESULT_TAG):
            r = json.loads(line[len(RESULT_TAG):])
            return CheckResult(exercise_id, check, r["passed"], r["message"], took)
    how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit code {proc.returncode}"
    tail = "\n".join((err or out).strip().splitlines()[-8:])
    hint = ""
    if "illegal memory access" in (err + out) or "illegal address" in (err + out):
        hint = " An illegal memory access: some thread read or wrote outside its tensor."
    return CheckResult(exercise_id, check, False,
                       f"the grader's process died ({how}) while running your code.{hint}\n{tail}", took)
