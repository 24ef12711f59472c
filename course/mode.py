"""GPU or CPU mode, chosen once when `course` is imported.

FLASHCOURSE_MODE=gpu|cpu|auto (default auto: GPU when torch sees a CUDA device).
CPU mode switches the Triton interpreter on; that must happen before any
@triton.jit runs, which is why notebooks import `course` first.
"""
from __future__ import annotations

import os

_VALID = ("auto", "gpu", "cpu")


def _choose() -> str:
    want = os.environ.get("FLASHCOURSE_MODE", "auto").strip().lower() or "auto"
    if want not in _VALID:
        raise ValueError(f"FLASHCOURSE_MODE={want!r}: use one of {', '.join(_VALID)}")
    # A forced mode needs no probe (the probe initialises the CUDA driver, and a process that forks runners,
    # autograder.runner.zygote, must not: CUDA does not work in a child forked after that). Forced GPU mode is still
    # checked, unless FLASHCOURSE_MODE_PROBED=1 says a parent process (the grader) has just checked it.
    if want == "cpu" or (want == "gpu" and os.environ.get("FLASHCOURSE_MODE_PROBED") == "1"):
        return want
    import torch

    has_gpu = torch.cuda.is_available()
    if want == "gpu" and not has_gpu:
        raise RuntimeError("FLASHCOURSE_MODE=gpu but torch sees no CUDA device")
    if want == "auto":
        want = "gpu" if has_gpu else "cpu"
    return want


MODE = _choose()
# True only inside nbgrader's autograde pass, which sets NBGRADER_EXECUTION=autograde around the
# execution of a submission (and nowhere else: not in a student's JupyterLab, not under Validate).
# Demo cells then skip running the student's code (the grader runs its own isolated checks).
GRADING = os.environ.get("NBGRADER_EXECUTION") == "autograde"
GPU = MODE == "gpu"
DEVICE = "cuda" if GPU else "cpu"

if not GPU:
    os.environ["TRITON_INTERPRET"] = "1"
    import sys

    if "triton" in sys.modules:  # imported before us: flip the knob as well
        import triton

        triton.knobs.runtime.interpret = True


def device_name() -> str:
    if GPU:
        import torch

        return torch.cuda.get_device_name()
    return "CPU (Triton interpreter; CUDA cells on the CPU execution layer)"


BANNER_GPU = "flashcourse · GPU mode on {name}: kernels run on the GPU and are timed."
BANNER_CPU = (
    "flashcourse · CPU mode (no CUDA device found): Triton kernels run in the Triton "
    "interpreter; CUDA cells are compiled by NVRTC for sm_90 (same errors and register report as "
    "on a GPU), then run on the CPU for correctness: each CUDA thread is a fiber, barriers and "
    "warp shuffles are real, and shared-memory races (a missing __syncthreads()) are reported with "
    "their lines. Not modelled: warps do not run in lockstep, races in global memory are not "
    "detected, __expf is exact. Nothing is timed, so bandwidth checks are skipped (they need a GPU)."
)


def banner() -> str:
    return BANNER_GPU.format(name=device_name()) if GPU else BANNER_CPU
