"""The CPU layer's header, precompiled: most of a CUDA cell's compile time in CPU mode is g++ reading
flashcuda_cpu.h (its templates, the half/bfloat16 types, the race hooks), the same for every cell.

One precompiled header per set of compiler flags, in its own directory named by a hash of the headers' text, the
flags and the compiler's version: course/cpucuda/.pch/<key>/flashcuda_cpu.h.gch. A compile passes `-I` that
directory ahead of the header's own, so g++ (which looks for NAME.gch in each directory of the search path
before NAME) takes it; where it is missing or was made for other flags, g++ reads the header as usual. A changed
header gives a new key, so a stale precompiled header is never used.

It is made by whoever compiles first where the directory is writable (a student's own kernel, the judge's
zygote before it forks runners); a sandboxed runner sees the course library read-only, so it uses what is there
and cannot plant one.
"""
from __future__ import annotations

import glob
import hashlib
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, ".pch")
NAME = "flashcuda_cpu.h"


def _compiler() -> str:
    return os.environ.get("CXX", "g++")


_VERSION: dict = {}


def _version(cxx: str) -> str:
    if cxx not in _VERSION:
        try:
            _VERSION[cxx] = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            _VERSION[cxx] = ""
    return _VERSION[cxx]


def key(flags) -> str:
    h = hashlib.sha256()
    for path in [os.path.join(HERE, NAME), *sorted(glob.glob(os.path.join(HERE, "include", "*.h")))]:
        with open(path, "rb") as f:
            h.update(path.encode() + b"\0" + f.read() + b"\0")
    cxx = _compiler()
    h.update(("\0".join(flags) + "\0" + cxx + "\0" + _version(cxx)).encode())
    return h.hexdigest()[:20]


def include_dir(flags, include_flags) -> str | None:
    """The directory to put first on the include path for a compile with `flags`, or None (no precompiled
    header for them here and none can be made: then the header is read as usual)."""
    d = os.path.join(ROOT, key(flags))
    if os.path.isfile(os.path.join(d, NAME + ".gch")):
        return d
    try:
        os.makedirs(d, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=d) as tmp:
            out = os.path.join(tmp, NAME + ".gch")
            r = subprocess.run([_compiler(), *flags, *include_flags, "-x", "c++-header", os.path.join(HERE, NAME),
                                "-o", out], capture_output=True, text=True, timeout=600)
            if r.returncode:
                return None
            os.replace(out, os.path.join(d, NAME + ".gch"))
    except (OSError, subprocess.TimeoutExpired):
        return None  # read-only (a sandboxed runner) or no compiler: compile without
    return d


def prepare() -> None:
    """Make the precompiled header for the flags a cell is built with here: the judge calls this before it starts
    sandboxed runners, which see the course library read-only and cannot make it."""
    from course import cpucuda
    include_dir(cpucuda._cxxflags(), (f"-I{cpucuda.HERE}", f"-I{cpucuda.INCLUDE}"))
