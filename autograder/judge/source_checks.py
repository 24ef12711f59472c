"""Checks the judge makes on a submission's text, never executing it: an exercise names them in
`Exercise.source_checks`, and the judge runs them before any check of that exercise, outside the runner (whose
memory is the student's: a check made there can be switched off from a solution cell).

no_floating_point: the kernel's %%cuda cell, composed with the device-function cells it calls exactly as the
runner composes it (course.cuda's own text functions: nothing of the submission runs), is compiled to PTX by
NVRTC for several GPU generations, each in a child process with a time limit; any f16/bf16/f32/f64 instruction or
register in any of them fails the exercise. Several generations, because `#if __CUDA_ARCH__ == 900` could hide a
float path from one compile (the CPU layer compiles the cell as an sm_90 one: course.cpucuda defines
__CUDA_ARCH__ too).
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys

ARCHS = ("compute_75", "compute_80", "compute_86", "compute_89", "compute_90", "compute_100", "compute_120")  # (one
# NVRTC does not know is left out: it reports an error for it)
COMPILE_TIMEOUT = 60.0  # seconds for all the generations of one source
FLOAT_PTX = re.compile(r"\.(?:b?f16(?:x2)?|f32|f64)\b")

_CHILD = r"""
import json, sys
from cupy.cuda import nvrtc
req = json.load(sys.stdin)
out = {}
for arch in req["archs"]:
    prog = nvrtc.createProgram(req["source"], "cell.cu", (), ())
    try:
        nvrtc.compileProgram(prog, ("-arch=" + arch, "-std=c++17", *("-I" + d for d in req["includes"])))
        ptx = nvrtc.getPTX(prog)
        out[arch] = ptx.decode() if isinstance(ptx, bytes) else ptx
    except Exception as e:  # noqa: BLE001
        out[arch] = {"error": str(e)[:2000]}
    finally:
        nvrtc.destroyProgram(prog)
print(json.dumps(out))
"""

_CACHE: dict[str, list[str] | None] = {}  # composed source's hash -> its float PTX lines (None: did not compile)


def kernel_source(cells, kernel: str) -> str | None:
    """The text the compiler sees for `kernel`: the last %%cuda cell that defines it, after the device-function
    cells before it that it calls (as course.cuda binds them: a later cell re-defining a name wins). None when
    no %%cuda cell defines it, or a later Python cell assigns the name (a kernel compiled from a Python string
    cannot be read here). The check is on the text: a binding made without an assignment statement (through
    globals(), setattr, exec) is not seen."""
    from course import cuda

    from autograder.declare.submission import defines
    namespace: dict = {}
    found = None
    for c in cells:
        if c.kind != "cuda":
            if defines(c, (kernel,)):  # a later Python cell binds the name anew: that is what would run
                found = None
            continue
        sigs = cuda.find_kernels(c.source)
        if sigs:
            if any(s.name == kernel for s in sigs):
                found = cuda.compose(c.source, cuda.libraries_used(c.source, namespace))
            continue
        fns = cuda.find_device_functions(c.source)
        if fns:
            lib = cuda.DeviceLibrary(c.source, fns, cuda.libraries_used(c.source, namespace), 0)
            namespace.update({f: cuda.DeviceFunction(f, lib) for f in fns})
    return None if found is None else cuda.PRELUDE + found


def float_lines(source: str) -> list[str] | None:
    """The PTX lines that use a floating-point type, over every generation in ARCHS (each line once, with the
    generation it came from); None if NVRTC could not compile it for any (the runner then reports the error)."""
    key = hashlib.sha256(source.encode()).hexdigest()
    if key not in _CACHE:
        from course import cuda
        req = json.dumps({"source": source, "archs": ARCHS, "includes": list(cuda.cuda_include_dirs())})
        try:
            r = subprocess.run([sys.executable, "-I", "-c", _CHILD], input=req, capture_output=True, text=True,
                               timeout=COMPILE_TIMEOUT)
            ptx = json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 and r.stdout.strip() else {}
        except (subprocess.TimeoutExpired, ValueError, IndexError):
            ptx = {}
        compiled = {a: p for a, p in ptx.items() if isinstance(p, str)}
        if not compiled:
            _CACHE[key] = None
        else:
            seen, lines = set(), []
            for arch, text in compiled.items():
                for ln in text.split("\n"):
                    ln = ln.strip()
                    if ln and not ln.startswith("//") and FLOAT_PTX.search(ln) and ln not in seen:
                        seen.add(ln)
                        lines.append(f"{ln}   ({arch.replace('compute_', 'sm_')})")
            _CACHE[key] = lines
    return _CACHE[key]


def no_floating_point(ex, cells) -> list[str]:
    kernel = ex.entry[0]
    source = kernel_source(cells, kernel)
    if source is None:
        return [f"{kernel} must be a kernel of a %%cuda cell: the grader reads that cell (and the device-function "
                "cells it calls) to check it uses integer arithmetic only"]
    found = float_lines(source)
    if not found:  # None: it does not compile, which the runner reports as your cell's error
        return []
    return [f"floating point in your kernel: compiled for {', '.join(a.replace('compute_', 'sm_') for a in ARCHS)}, "
            f"its PTX has {len(found)} floating-point instruction(s) or register(s), e.g. `{found[0][:100]}`; the "
            "exercise asks for integer arithmetic only (on every GPU: a float path behind #if __CUDA_ARCH__ counts)"]


CHECKS = {"no_floating_point": no_floating_point}


def problems(ex, cells) -> list[str]:
    """What the exercise's source checks find in the submission's cells (empty: nothing)."""
    out: list[str] = []
    for name in ex.source_checks:
        out += CHECKS[name](ex, cells)
    return out
