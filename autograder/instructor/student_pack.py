"""`flashcourse student-pack DIR [--tar] [--force]`: a student distribution without solutions.

The repository is the instructor's course directory: it holds the solutions (`source/`,
`kernels_ref/`), known-wrong submissions (patched solutions, `submissions/`) and the
hidden tests (the `"hidden"` case lists of `autograder/declare/exercises/*.py`). The pack holds only what a
student needs to work through the release notebooks and run their visible test cells:

  course/                      the library the notebooks import, as tracked by git (not the diagrams' source)
  release/CH/CH.ipynb          the student notebooks, as committed
  autograder/                  what `from autograder import check` needs (the import closure of
                               autograder/__init__.py and autograder/runner/worker.py, found from the
                               sources), exercises/*.py with every "hidden" case list removed
                               and `solution=` paths blanked, thresholds.toml
  lab/                         what `make lab` runs, as in the repository: serve.sh (the student view of JupyterLab,
                               on the working copy work/ that workcopy.py makes from release/) and its Jupyter config
  pyproject.toml, Makefile     `make lab`, `make test`, as in the repository; the Makefile checks the Python
                               (pyproject.toml's requires-python) before it creates .venv
  README.md, selfcheck.py      for students; `make test` runs selfcheck.py
  STAMP                        the commit the pack was made from

The pack is assembled in a temporary folder beside DIR, verified (no "hidden" check left in the
registry, every other case list unchanged, no solution text, no kernels_ref import) and then moved
into place.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib

from autograder.layout import INSTRUCTOR_DATA, INSTRUCTOR_PACKAGES, ROOT

HIDDEN = "hidden"

# Instructor-only code follows from the layout (autograder.layout): no module a student's check() needs
# may import a package in INSTRUCTOR_PACKAGES or a top-level folder of INSTRUCTOR_DATA (kernels_ref, ...).
INSTRUCTOR_ONLY = INSTRUCTOR_PACKAGES
INSTRUCTOR_TOPS = tuple(p for p in INSTRUCTOR_DATA if "/" not in p)
# The import closure starts here: the package (`from autograder import check`) and the runner's two programs
# (`python -m autograder.runner.worker`, and the zygote that forks workers); the registry imports the chapters.
ENTRY_MODULES = ("autograder", "autograder.runner.worker", "autograder.runner.zygote", "autograder.declare.registry",
                 "autograder.declare.exercises")
SKIP_PARTS = ("__pycache__", ".ipynb_checkpoints", "node_modules", ".git")
SOLUTION_MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


class PackError(RuntimeError):
    pass


# ---------------------------------------------------------------- the repository

def _git(*args: str) -> str | None:
    try:
        r = subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout if r.returncode == 0 else None


def commit() -> str:
    """HEAD's sha; 'unknown (no git)' without git."""
    return (_git("rev-parse", "HEAD") or "").strip() or "unknown (no git)"


def files_under(prefix: str) -> list[str]:
    """Files under `prefix` (relative to the repository): those git tracks, or, without git, the
    files there less caches and checkpoints. Sorted, relative paths."""
    out = _git("ls-files", "-z", "--", prefix)
    if out is not None and (out or _git("rev-parse", "--is-inside-work-tree")):
        paths = [p for p in out.split("\0") if p]
    else:
        paths = []
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, prefix)):
            dirnames[:] = [d for d in dirnames if d not in SKIP_PARTS and not d.startswith(".")]
            for f in filenames:
                if not f.endswith((".pyc", ".pyo")) and not f.startswith("."):
                    paths.append(os.path.relpath(os.path.join(dirpath, f), ROOT))
    paths = [p.replace(os.sep, "/") for p in paths]
    keep = [p for p in paths if os.path.isfile(os.path.join(ROOT, p))
            and not any(part in SKIP_PARTS for part in p.split("/"))]
    return sorted(keep)


def chapters() -> list[str]:
    """Chapters with a release notebook release/CH/CH.ipynb."""
    out = []
    for p in files_under("release"):
        parts = p.split("/")
        if len(parts) == 3 and parts[2] == parts[1] + ".ipynb":
            out.append(parts[1])
    return sorted(out)


# ---------------------------------------------------------------- which autograder modules a check needs

def _module_file(module: str) -> str | None:
    base = os.path.join(ROOT, *module.split("."))
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


def _imports(module: str, path: str) -> set[str]:
    """Modules imported anywhere in the file (function bodies too), absolute names."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            for a in node.names:  # `from . import registry`: a submodule
                if _module_file(f"{mod}.{a.name}"):
                    found.add(f"{mod}.{a.name}")
    for m in list(found):  # importing a.b.c imports a and a.b
        parts = m.split(".")
        found.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return found


def autograder_closure() -> dict[str, str]:
    """{module: repository-relative file} of every autograder module a student's check() can
    import: the closure of ENTRY_MODULES and every chapter module. Raises PackError when it reaches
    an instructor-only module or kernels_ref."""
    todo = list(ENTRY_MODULES)
    todo += ["autograder.declare.exercises." + os.path.splitext(f)[0]
             for f in sorted(os.listdir(os.path.join(ROOT, "autograder", "declare", "exercises")))
             if f.endswith(".py") and f != "__init__.py"]
    seen: dict[str, str] = {}
    via: dict[str, str] = {}
    while todo:
        mod = todo.pop()
        if mod in seen:
            continue
        path = _module_file(mod)
        if path is None:
            raise PackError(f"{mod} (imported by {via.get(mod, 'the entry points')}) has no source file")
        seen[mod] = os.path.relpath(path, ROOT).replace(os.sep, "/")
        for dep in sorted(_imports(mod, path)):
            top = dep.split(".")[0]
            if top in INSTRUCTOR_TOPS:
                raise PackError(f"{seen[mod]} imports {dep}: a student's check() would need the instructor's "
                                f"{top}/; the pack cannot be made")
            if top != "autograder":
                continue
            if any(dep == x or dep.startswith(x + ".") for x in INSTRUCTOR_ONLY):
                raise PackError(f"{seen[mod]} imports {dep}, an instructor-only module; the pack cannot be made")
            if dep not in seen:
                via.setdefault(dep, seen[mod])
                todo.append(dep)
    return dict(sorted(seen.items()))


# ---------------------------------------------------------------- hidden cases out of the exercises

def _offsets(data: bytes) -> list[int]:
    starts, pos = [0], 0
    while True:
        pos = data.find(b"\n", pos) + 1
        if not pos:
            return starts
        starts.append(pos)


def _hidden_uses(tree: ast.AST) -> list[str]:
    """Places that name the hidden check other than as a dict key (which strip_hidden removes)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == HIDDEN:
            out.append(f"line {node.lineno}: {HIDDEN}= keyword")
        elif isinstance(node, ast.Constant) and node.value == HIDDEN:
            out.append(f"line {node.lineno}: the string {HIDDEN!r}")
    return out


def strip_hidden(source: str, blank_solutions: bool = True) -> tuple[str, int]:
    """The module's source without any `"hidden": [...]` dict entry (with its comma, and a comment
    after it on the same line; a line left empty goes too), without comment lines that mention
    hidden cases, and with every `solution="..."` keyword set to "". Formatting and comments
    elsewhere are kept. Returns the new source and how many hidden entries were removed. Raises
    PackError if the module still names "hidden" after that (e.g. `hidden=` or `cases["hidden"]`)."""
    data = source.encode("utf-8")  # ast column offsets count UTF-8 bytes
    starts = _offsets(data)
    at = lambda line, col: starts[line - 1] + col  # noqa: E731
    cuts: list[tuple[int, int, bytes]] = []
    removed = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == HIDDEN:
                    a, b = at(key.lineno, key.col_offset), at(value.end_lineno, value.end_col_offset)
                    after = re.compile(rb"[ \t]*(,)?[ \t]*(#[^\n]*)?").match(data, b)
                    b = after.end()
                    line_start = data.rfind(b"\n", 0, a) + 1
                    if not data[line_start:a].strip() and data[b:b + 1] in (b"\n", b""):
                        a, b = line_start, b + 1  # the entry's lines, whole
                    elif after.group(1) is None:  # the last entry, inline: take the comma before it
                        before = re.compile(rb",[ \t]*$").search(data, 0, a)
                        if before:
                            a = before.start()
                    cuts.append((a, b, b""))
                    removed += 1
        elif blank_solutions and isinstance(node, ast.keyword) and node.arg == "solution":
            v = node.value
            cuts.append((at(v.lineno, v.col_offset), at(v.end_lineno, v.end_col_offset), b'""'))
    for a, b, new in sorted(cuts, reverse=True):
        data = data[:a] + new + data[b:]
    text = "\n".join(ln for ln in data.decode("utf-8").split("\n")
                     if not (ln.lstrip().startswith("#") and HIDDEN in ln.lower()))
    left = _hidden_uses(ast.parse(text))
    if left:
        raise PackError("the hidden cases are named in a way the pack cannot remove: " + "; ".join(left))
    return text, removed


ANSWER_KEY = "_answer_key"  # exercise-module functions named so build a reference that IS the answer
NOT_IN_PACK = ("not checked in the student pack: this exercise is graded bit-exactly against an answer key "
               "that would give the answer away; your instructor's grading checks it (the chapter's own cells "
               "compare your output with float64 to check yourself)")


def strip_answer_keys(source: str) -> tuple[str, int]:
    """Replace the body of every top-level function whose name starts with `_answer_key` (a factory of an
    exercise's bit-exact reference, which would be its solution) by one that returns a reference failing
    with NOT_IN_PACK. Returns the new source and how many were replaced."""
    lines = source.split("\n")
    keys = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name.startswith(ANSWER_KEY)]
    for node in sorted(keys, key=lambda n: n.lineno, reverse=True):
        first = node.body[0].lineno - 1
        stub = ["    def reference(inputs):",
                "        from autograder.boundary.guards import Failure",
                f"        raise Failure({NOT_IN_PACK!r})",
                "",
                "    return reference"]
        lines[first:node.end_lineno] = stub
    return "\n".join(lines), len(keys)


# ---------------------------------------------------------------- what must not ship

def solution_lines(min_len: int = 24) -> set[str]:
    """Distinctive lines of the reference solutions: the code between BEGIN/END SOLUTION in
    kernels_ref/ (stripped, comments dropped, at least `min_len` characters), less any line the
    release notebooks show anyway. Empty without kernels_ref/."""
    lines: set[str] = set()
    for rel in files_under("kernels_ref"):
        if not rel.endswith((".py", ".cu", ".cuh", ".h")):
            continue
        inside = False
        for raw in open(os.path.join(ROOT, rel), encoding="utf-8"):
            if "BEGIN SOLUTION" in raw:
                inside = True
            elif "END SOLUTION" in raw:
                inside = False
            elif inside:
                code = re.split(r"\s(#|//)\s", " " + raw.strip())[0].strip()
                if len(code) >= min_len:
                    lines.add(code)
    released = "".join(open(os.path.join(ROOT, f"release/{ch}/{ch}.ipynb"), encoding="utf-8").read()
                       for ch in chapters())
    return {ln for ln in lines if json.dumps(ln)[1:-1] not in released and ln not in released}


def leaks(pack: str, solutions: set[str] | None = None) -> list[str]:
    """What in the pack (a folder) looks like instructor material: solution markers, imports of
    kernels_ref, lines of the reference solutions, a "hidden" case list, instructor-only paths."""
    solutions = solution_lines() if solutions is None else solutions
    problems = []
    for name in (*INSTRUCTOR_DATA, "tests", "benchmarks", "BENCHMARKS.md"):
        if os.path.exists(os.path.join(pack, name)):
            problems.append(f"{name} is in the pack")
    kernels_ref_import = re.compile(r"^\s*(from\s+kernels_ref\b|import\s+kernels_ref\b)", re.M)
    for dirpath, _, filenames in os.walk(pack):
        if os.path.relpath(dirpath, pack).split(os.sep)[0] in (".venv", "__pycache__"):
            continue
        for f in filenames:
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, pack)
            try:
                text = open(path, encoding="utf-8").read()
            except (UnicodeDecodeError, OSError):
                continue
            problems += [f"{rel}: {m}" for m in SOLUTION_MARKERS if m in text]
            if kernels_ref_import.search(text):
                problems.append(f"{rel}: imports kernels_ref")
            problems += [f"{rel}: holds the solution line {ln!r}" for ln in sorted(solutions) if ln in text]
            if rel.startswith(os.path.join("autograder", "declare", "exercises")) and rel.endswith(".py"):
                left = _hidden_uses(ast.parse(text))
                problems += [f"{rel}: {x}" for x in left]
    return problems


# ---------------------------------------------------------------- generated files

def _header(sha: str, comment: str) -> str:
    return f"{comment} Generated by `flashcourse student-pack` from commit {sha}; do not edit.\n"


def _pins() -> dict[str, str]:
    """torch and triton pins, TORCH_INDEX handling and LAB_ARGS, from the repository's Makefile."""
    text = open(os.path.join(ROOT, "Makefile"), encoding="utf-8").read()
    out = {}
    for pkg in ("torch", "triton"):
        m = re.search(rf"\b{pkg}==([\w.+-]+)", text)
        if not m:
            raise PackError(f"no {pkg}==VERSION pin in the Makefile")
        out[pkg] = m.group(1)
    for var in ("TORCH_INDEX", "TORCH_ARGS", "LAB_ARGS"):
        m = re.search(rf"^{var}\s*[:?]?=.*$", text, re.M)
        if not m:
            raise PackError(f"no {var} in the Makefile")
        out[var] = m.group(0)
    m = re.search(r"^# Where there is no GPU.*?(?=^TORCH_INDEX)", text, re.M | re.S)
    out["torch_comment"] = m.group(0) if m else ""
    return out


def package_data(files: list[str], packages: list[str]) -> dict[str, list[str]]:
    """setuptools package-data globs (`*.EXT` per folder) for the non-Python files among `files`,
    each under its nearest enclosing package."""
    out: dict[str, set[str]] = {}
    for f in files:
        if f.endswith(".py"):
            continue
        d = os.path.dirname(f)
        while d and d.replace("/", ".") not in packages:
            d = os.path.dirname(d)
        if not d:
            continue
        rel = os.path.relpath(os.path.dirname(f), d).replace(os.sep, "/")
        ext = os.path.splitext(f)[1]
        pattern = f"*{ext}" if ext else os.path.basename(f)
        out.setdefault(d.replace("/", "."), set()).add(pattern if rel == "." else f"{rel}/{pattern}")
    return {k: sorted(v) for k, v in sorted(out.items())}


def pyproject(sha: str, packages: list[str], data: dict[str, list[str]]) -> str:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        main = tomllib.load(f)["project"]
    q = json.dumps  # a JSON string is a TOML basic string
    deps = "".join(f"  {q(d)},\n" for d in main["dependencies"])
    extras = {k: v for k, v in main.get("optional-dependencies", {}).items() if k != "dev"}
    extra_lines = "".join(f"{k} = [{', '.join(q(d) for d in v)}]\n" for k, v in extras.items())
    data_lines = "".join(f"{q(k)} = [{', '.join(q(p) for p in v)}]\n" for k, v in data.items())
    return (
        _header(sha, "#")
        + "# The student pack of flashcourse: the course library, the student notebooks and the visible checks.\n"
        "[build-system]\n"
        'requires = ["setuptools>=64"]\n'
        'build-backend = "setuptools.build_meta"\n\n'
        "[project]\n"
        'name = "flashcourse-student"\n'
        f"version = {q(main.get('version', '0.1.0'))}\n"
        f"description = {q('Student pack of flashcourse: ' + main.get('description', ''))}\n"
        f"requires-python = {q('>=' + python_needed())}\n"
        "# torch and triton are installed first by `make` (the CPU build of torch where TORCH_INDEX says so).\n"
        f"dependencies = [\n{deps}]\n\n"
        + (f"[project.optional-dependencies]\n{extra_lines}\n" if extras else "")
        + "[tool.setuptools]\n"
        f"packages = [{', '.join(q(p) for p in packages)}]\n\n"
        "[tool.setuptools.package-data]\n"
        f"{data_lines}"
    )


def python_needed() -> str:
    """The oldest Python the course runs on, "3.11", from the repository's pyproject.toml (requires-python,
    which must read ">=X.Y"): the pack's pyproject.toml, README and Makefile's check all follow it."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        spec = tomllib.load(f)["project"].get("requires-python", "")
    m = re.fullmatch(r"\s*>=\s*(\d+(?:\.\d+)*)\s*", spec)
    if not m:
        raise PackError(f"pyproject.toml's requires-python is {spec!r}; the pack understands only '>=X.Y'")
    return m.group(1)


# The first step of the pack's installation, before .venv is made or anything installed: the Python that will
# run the course (.venv's when there is one, else $(PYTHON)) is at least pyproject.toml's requires-python, else
# one line says which Python was found and which is needed. Version numbers are compared by `sort -V`; the
# Python is asked only for `--version`, which any Python answers.
CHECK_PYTHON = "".join(f"\t{line}\n" for line in r"""
@py='$(PYTHON)'; test -x $(BIN)/python && py=$(BIN)/python; need='$(PYTHON_NEEDED)'; \
found=$$($$py --version 2>&1 | sed -n 's/^Python \([0-9][0-9.]*\).*/\1/p'); \
again='make PYTHON=python3.X ... picks another Python'; \
if [ -z "$$need" ]; then echo 'flashcourse: pyproject.toml has no requires-python = ">=X.Y"' >&2; exit 1; fi; \
if [ -z "$$found" ]; then \
  echo "flashcourse: this course needs Python $$need or newer; $$py does not run ($$again)" >&2; exit 1; fi; \
if [ "$$(printf '%s\n' "$$need" "$$found" | sort -V | head -n 1)" != "$$need" ]; then \
  echo "flashcourse: this course needs Python $$need or newer; $$py is Python $$found ($$again)" >&2; exit 1; fi
""".strip("\n").splitlines())


def makefile(sha: str) -> str:
    p = _pins()
    return (
        _header(sha, "#")
        + "# Two commands do all set-up:  `make lab` opens the course, `make test` checks the installation.\n"
        "# Both create .venv and install into it on first use (idempotent), after checking the Python.\n"
        "PYTHON ?= python3\n"
        "VENV   := .venv\n"
        "BIN    := $(VENV)/bin\n"
        "STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml Makefile | cksum | cut -d' ' -f1)\n"
        "# The oldest Python the course runs on: pyproject.toml's requires-python (\">=X.Y\").\n"
        "PYTHON_NEEDED := $(shell sed -n 's/^requires-python *= *\">= *\\([0-9][0-9.]*\\)\".*/\\1/p' pyproject.toml)\n"
        f"{p['torch_comment']}{p['TORCH_INDEX']}\n{p['TORCH_ARGS']}\n{p['LAB_ARGS']}\n\n"
        ".PHONY: lab test install\n\n"
        "install: $(STAMP)\n\n"
        "$(STAMP):\n"
        f"{CHECK_PYTHON}"
        "\ttest -x $(BIN)/python || $(PYTHON) -m venv $(VENV)\n"
        f"\t$(BIN)/python -m pip install -q torch=={p['torch']} $(TORCH_ARGS)\n"
        f"\t$(BIN)/python -m pip install -q triton=={p['triton']} -e .\n"
        "\trm -f $(VENV)/.installed-* && touch $@\n\n"
        "# The student view (lab/serve.sh): your working copy work/ as the server root (made on first use from\n"
        "# release/, never overwritten: lab/workcopy.py), Chapter 1 in front, nbgrader's Validate button and none of\n"
        "# its instructor tools (lab/student/).\n"
        "lab: $(STAMP)\n"
        "\tJUPYTER=$(BIN)/jupyter bash lab/serve.sh student $(LAB_ARGS)\n\n"
        "# A small self-check in CPU mode: the course imports, one visible check passes, every notebook opens.\n"
        "test: $(STAMP)\n"
        "\tFLASHCOURSE_MODE=cpu $(BIN)/python selfcheck.py\n"
    )


SELFCHECK = '''\
"""`make test`: a self-check of this student pack, in CPU mode (a few seconds to a minute).

It imports the course, compiles and runs a tiny CUDA kernel on the CPU execution layer, runs one
visible check (Chapter 1's safe softmax) on a known-correct function, and opens every notebook.
{stamp}"""
import glob
import importlib.util
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("FLASHCOURSE_MODE", "cpu")
# A correct safe softmax, written so that it is not the chapter's answer (a log-sum-exp in float64).
KNOWN_CORRECT = """\\
import numpy as np


def safe_softmax(x):
    lse = np.logaddexp.reduce(x.astype(np.float64), axis=-1, keepdims=True)
    return np.exp(x - lse).astype(np.float32)
"""
ADD_ONE = """\\
extern "C" __global__ void add_one(float* y, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += 1.0f;
}}
"""


def step(what):
    print(f"-- {{what}}", flush=True)


def main() -> int:
    step("import the course")
    import course
    import torch
    course.setup(quiet=True)
    print(course.banner())
    import autograder
    from autograder import check
    from autograder.declare import registry
    where = os.path.dirname(os.path.dirname(os.path.abspath(autograder.__file__)))
    if os.path.realpath(where) != os.path.realpath(HERE):
        print(f"autograder is imported from {{where}}, not from this pack ({{HERE}}): "
              "run `make test` in the pack, with its own .venv")
        return 1

    step("compile a CUDA kernel with NVRTC and run it" + ("" if course.GPU else " on the CPU execution layer"))
    mod = course.compile_cuda(ADD_ONE)
    y = torch.zeros(100, device=course.DEVICE)
    mod.add_one((1,), (128,), (y, 100))
    if not bool((y == 1).all()):
        print(f"add_one gave {{y[:8].tolist()}}..., expected ones")
        return 1
    print("ok:", mod.summary().splitlines()[0])

    step("run a visible check on a known-correct function")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "known_correct.py")
        with open(path, "w") as f:
            f.write(KNOWN_CORRECT)
        spec = importlib.util.spec_from_file_location("known_correct", path)
        known = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(known)
        check("ch01.safe_softmax", "correctness", namespace=vars(known))

    step("open every notebook")
    import nbformat
    call = re.compile(r"check\\(\\s*[\\"']([\\w.]+)[\\"']\\s*(?:,\\s*[\\"'](\\w+)[\\"'])?")
    paths = sorted(glob.glob(os.path.join(HERE, "release", "*", "*.ipynb")))
    if not paths:
        print("no notebooks under release/")
        return 1
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        checks = 0
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            for ex_id, name in call.findall(cell.source):
                ex = registry.get(ex_id)
                if (name or "correctness") not in ex.checks:
                    print(f"{{os.path.relpath(path, HERE)}}: check({{ex_id!r}}, {{name!r}}) is not in this pack")
                    return 1
                checks += 1
        print(f"ok: {{os.path.relpath(path, HERE)}} ({{len(nb.cells)}} cells, {{checks}} checks)")
    print("self-check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


README = """\
<!-- {stamp} -->
# flashcourse: student pack

An interactive course on GPU kernels, from the softmax formula to kernels that run at the speed of
memory. You write NumPy functions, Triton kernels and CUDA C++ kernels (`%%cuda` cells) in
JupyterLab notebooks; test cells under each exercise check your code as you go.

## What is in the pack

| path | what |
|---|---|
{chapter_rows}| `course/` | the library the notebooks import: CPU/GPU mode, `%%cuda` cells, timing, plots |
| `autograder/` | the visible checks the test cells run (`from autograder import check`) |
| `lab/` | what `make lab` runs: JupyterLab in the student view, on your working copy `work/` |
| `Makefile`, `pyproject.toml` | set-up: `make lab`, `make test` |
| `selfcheck.py` | what `make test` runs |
| `STAMP` | the course version this pack was made from |

There are no solutions in the pack, and no hidden tests.

## Set-up: two commands

On a Linux machine with Python {python} or newer (`python3`), `make` and a C compiler:

```bash
make lab     # creates .venv, installs everything, opens the course in JupyterLab
make test    # creates .venv if needed, checks the installation (CPU mode, about a minute)
```

Both are idempotent: the first run installs (a few minutes, about 2.5 GB), later runs start at once.
Before it creates `.venv` or installs anything, `make` checks that `python3` is Python {python} or
newer and stops with one line saying which version it found if not; where your `python3` is older
(Ubuntu 22.04's is 3.10), install a newer one and name it: `make lab PYTHON=python{python}`.
On a machine without an NVIDIA GPU where `pip install torch` would fetch the multi-GB CUDA build, add
`TORCH_INDEX=https://download.pytorch.org/whl/cpu` to either command:
`make lab TORCH_INDEX=https://download.pytorch.org/whl/cpu`.

## CPU mode and GPU mode

With an NVIDIA GPU the kernels run on it and are timed. Without one the course runs in **CPU
mode**: Triton kernels run in Triton's interpreter; CUDA cells are compiled by NVRTC (the same
errors and register report as on a GPU) and then run on a small CPU execution layer (each CUDA
thread a fiber, real barriers and warp shuffles, deadlocks reported), so you get correctness
feedback for every exercise on a laptop; checks that need a GPU (speed, and a few kernels and data
types) say they are skipped. The banner at the top of each notebook says which mode you are in;
`FLASHCOURSE_MODE=cpu` or `gpu` forces one (`FLASHCOURSE_MODE=cpu make lab`).

## Working through a chapter

`make lab` opens your **working copy** of the course, `work/`, with Chapter 1
(`work/ch01_softmax/ch01_softmax.ipynb`) in front; the other chapters are one click away in the
file browser (`work/CHAPTER/CHAPTER.ipynb`; `work/course/` holds the glossary and the diagrams the
chapters link to). Work there, not in `release/`:

- `make lab` makes `work/` the first time, from the chapters in `release/` (which stay as they came:
  never edit those). After that your notebooks are never overwritten: a chapter added to the pack
  later is copied in, and when a chapter you already have has a newer release, `make lab` says so
  in one line and keeps yours.
- A fresh copy of a chapter: rename (or delete) your `work/CHAPTER/CHAPTER.ipynb` and run `make lab`
  again.
- `work/` is yours: back it up with your other files (a new pack unpacked elsewhere does not have
  it). `FLASHCOURSE_WORK=DIR make lab` keeps the working copy in DIR instead.
- Keep your own extra notebooks inside a chapter's folder: in `work/` itself, `import course` finds
  the folder `work/course/` instead of the course library.

Read, run, replace each `raise NotImplementedError()` / `NOT_IMPLEMENTED();` with your code, and
run the test cells below it. Do not edit the test cells: when your notebook is graded they are put
back as they were. nbgrader's **Validate** button (in the notebook's toolbar) runs the whole
notebook from the top and lists the test cells that fail.

**What the visible checks do.** `check("ch01.safe_softmax", "correctness")` runs your function or
kernel in a fresh process with a timeout, on the visible shapes, with fresh random inputs at every
run, including adversarial rows (huge and tiny values, `-inf` entries, constant rows); outputs start
as NaN and are surrounded by guard zones, so an unwritten element or an out-of-bounds write fails.
It compares against a float64 reference with a tolerance and, when something is wrong, says what:
which element, expected, got, which kind of row. A check that passes prints a line starting with ✓.
Checks named `bandwidth` or `throughput` time your kernel against your GPU's copy bandwidth (or
PyTorch's own operator): they run only on a GPU.

**What is graded by your instructor.** Hidden tests (more shapes, wider rows, other data types) run
only when your instructor grades your notebook; their test cells say so and do nothing in your
notebook. Bandwidth and throughput are graded on your instructor's GPU. Passing the visible checks
is a good sign, not a guarantee: make your code correct for every shape the exercise allows.

## Submitting

Submit the notebook file itself, your `work/CHAPTER/CHAPTER.ipynb`, as your instructor says (keep its
name; do not copy your code into a new notebook: the grader finds your answers by the cells' ids).
Before you submit, restart the kernel and run all cells: what is graded is what the notebook file
holds, run from the top in a fresh process.
"""


# ---------------------------------------------------------------- the pack

def _copy(rel: str, dest: str, text: str | None = None) -> None:
    out = os.path.join(dest, rel)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    if text is None:
        shutil.copy2(os.path.join(ROOT, rel), out)
    else:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)


def _dump_registry(where: str, modules: list[str] = ()) -> dict:
    """The registry as a fresh interpreter sees it with only `where` on PYTHONPATH, after importing
    `modules` (so that a module the pack lacks fails here) and recording where they came from."""
    code = ("import importlib, json, autograder\nfrom autograder.declare import registry\n"
            f"files = {{m: importlib.import_module(m).__file__ for m in {list(modules)!r}}}\n"
            "print(json.dumps({'file': autograder.__file__, 'files': files, 'exercises': {ex.id: {"
            "'checks': ex.checks, 'solution': ex.solution, "
            "'cases': {k: [repr(c) for c in v] for k, v in ex.cases.items()}} for ex in registry.all_exercises()}}))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=where, FLASHCOURSE_MODE="cpu", PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-c", code], cwd=where, env=env, capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0:
        raise PackError(f"the registry does not import from {where}:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def verify(pack: str) -> None:
    """Raise PackError unless the pack's registry is the repository's less its hidden cases, is
    the one imported from the pack, and nothing in the pack leaks instructor material."""
    modules = ["course", "course.magic"] + list(autograder_closure())
    main, mine = _dump_registry(ROOT)["exercises"], _dump_registry(pack, modules)
    problems = [f"{m} is imported from {f}, not from the pack" for m, f in {"autograder": mine["file"],
                **mine["files"]}.items() if not os.path.realpath(f).startswith(os.path.realpath(pack) + os.sep)]
    for ex_id, want in main.items():
        got = mine["exercises"].get(ex_id)
        if got is None:
            problems.append(f"{ex_id} is missing")
            continue
        if got["checks"] != [c for c in want["checks"] if c != HIDDEN]:
            problems.append(f"{ex_id}: checks {got['checks']}, expected {want['checks']} less {HIDDEN!r}")
        if got["cases"] != {k: v for k, v in want["cases"].items() if k != HIDDEN}:
            problems.append(f"{ex_id}: the visible cases differ from the repository's")
        if got["solution"]:
            problems.append(f"{ex_id}: solution={got['solution']!r}")
    problems += [f"{x} is not in the repository" for x in set(mine["exercises"]) - set(main)]
    problems += leaks(pack)
    if problems:
        raise PackError("the pack failed its verification:\n  " + "\n  ".join(problems))


def _title(dest: str, ch: str) -> str:
    """The notebook's first heading ("Chapter 1 · Softmax"), or its name."""
    with open(os.path.join(dest, "release", ch, f"{ch}.ipynb"), encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    for c in cells:
        if c["cell_type"] == "markdown":
            for line in "".join(c["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip().replace("|", "/")
    return ch


def _shipped_sources(dest: str) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), dest).replace(os.sep, "/")
                  for d, _, fs in os.walk(dest) for f in fs)


def assemble(dest: str) -> dict:
    """Write the pack into the empty folder `dest`; return a summary."""
    closure = autograder_closure()
    # what `make lab` runs (lab/serve.sh student): the working copy, the student view's Jupyter config
    lab_files = files_under("lab")
    for needed in ("lab/serve.sh", "lab/workcopy.py"):
        if needed not in lab_files:
            raise PackError(f"{needed} is missing: the pack's `make lab` runs it")
    # the diagrams' source stays home: the notebooks show the PNGs, and Chapter 6's pictures are computed by the
    # very integer algorithm its first exercise asks for (the leak check below would refuse it)
    course_files = [p for p in files_under("course") if not (p.startswith("course/diagrams/") and p.endswith(".py"))]
    chs = chapters()
    if not chs:
        raise PackError("no release notebooks (release/CH/CH.ipynb): run `flashcourse generate` first")
    sources = course_files + lab_files + [f"release/{ch}/{ch}.ipynb" for ch in chs] + list(closure.values())
    data_files = [p for p in files_under("autograder/declare") if not p.endswith(".py")
                  and p.count("/") == 2]  # the shipped bars, thresholds.toml (not thresholds.d/: this GPU's own)
    sources += data_files
    sha = commit()
    if _git("status", "--porcelain", "--untracked-files=all", "--", *sources):
        sha += " + uncommitted changes"  # the pack is made from the working tree

    removed = {}
    for rel in course_files + lab_files + [f"release/{ch}/{ch}.ipynb" for ch in chs] + data_files:
        _copy(rel, dest)
    for mod, rel in closure.items():
        text = open(os.path.join(ROOT, rel), encoding="utf-8").read()
        if mod.startswith("autograder.declare.exercises."):
            text, n = strip_hidden(text)
            text, _ = strip_answer_keys(text)
            removed[rel] = n
            text = _header(sha, "#") + "# Student copy: the visible cases only.\n" + text
        _copy(rel, dest, text)
    for ch in chs:  # the release notebooks hold no solution and no hidden test, as committed
        nbtext_ = open(os.path.join(dest, "release", ch, f"{ch}.ipynb"), encoding="utf-8").read()
        bad = [m for m in SOLUTION_MARKERS if m in nbtext_]
        if bad:
            raise PackError(f"release/{ch}/{ch}.ipynb holds {bad[0]!r}: regenerate it (`flashcourse generate`)")

    packages = sorted({os.path.dirname(p).replace("/", ".") for p in course_files + list(closure.values())
                       if p.endswith(".py") and os.path.basename(p) == "__init__.py"})
    rows = "".join(f"| `release/{ch}/{ch}.ipynb` | {_title(dest, ch)} |\n" for ch in chs)
    stamp = f"Generated by `flashcourse student-pack` from commit {sha}; do not edit."
    _copy("pyproject.toml", dest, pyproject(sha, packages, package_data(sources, packages)))
    _copy("Makefile", dest, makefile(sha))
    _copy("README.md", dest, README.format(stamp=stamp, chapter_rows=rows, python=python_needed()))
    _copy("selfcheck.py", dest, SELFCHECK.format(stamp="\n" + stamp + "\n"))
    files = _shipped_sources(dest) + ["STAMP"]
    _copy("STAMP", dest, stamp + "\n" + f"chapters: {' '.join(chs)}\n"
          f"hidden case lists removed: {sum(removed.values())} (from {len(removed)} chapter modules)\n"
          f"files ({len(files)}):\n" + "".join(f"  {f}\n" for f in files))
    return {"commit": sha, "chapters": chs, "hidden_removed": removed, "files": files}


def _safe_to_replace(dest: str) -> None:
    real = os.path.realpath(dest)
    if real in ("/", os.path.realpath(os.path.expanduser("~"))) or \
            os.path.realpath(ROOT) == real or os.path.realpath(ROOT).startswith(real + os.sep):
        raise PackError(f"refusing to replace {dest}")
    if not os.path.isfile(os.path.join(dest, "STAMP")) or "flashcourse student-pack" not in \
            open(os.path.join(dest, "STAMP"), encoding="utf-8", errors="replace").read():
        raise PackError(f"{dest} is not empty and is not a student pack (no STAMP of one): "
                        "--force replaces only an earlier pack; empty it yourself")


def build(dest: str, *, tar: bool = False, force: bool = False, check: bool = True) -> dict:
    """Write the student pack into `dest` (missing or empty; with force, an earlier pack is
    replaced) and, with tar, dest.tar.gz beside it. The pack is assembled and verified in a
    temporary folder next to dest, then moved into place."""
    dest = os.path.abspath(dest)
    if os.path.exists(dest) and not os.path.isdir(dest):
        raise PackError(f"{dest} exists and is not a folder")
    if os.path.isdir(dest) and os.listdir(dest):
        if not force:
            raise PackError(f"{dest} is not empty (--force replaces an earlier pack)")
        _safe_to_replace(dest)
    parent = os.path.dirname(dest)
    os.makedirs(parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".student-pack-", dir=parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(work, 0o777 & ~umask)  # mkdtemp's 0700 would be the pack's, and the tarball's
    try:
        summary = assemble(work)
        if check:
            verify(work)
        caches = [d for d, _, _ in os.walk(work) if os.path.basename(d) == "__pycache__"]
        for d in caches:  # none expected (the verification writes no bytecode)
            shutil.rmtree(d)
        if os.path.isdir(dest):
            shutil.rmtree(dest) if os.listdir(dest) else os.rmdir(dest)
        os.rename(work, dest)
    finally:
        if os.path.isdir(work):
            shutil.rmtree(work)
    if tar:
        summary["tar"] = make_tar(dest)
    summary["dest"] = dest
    return summary


def make_tar(dest: str) -> str:
    out = dest.rstrip(os.sep) + ".tar.gz"
    name = os.path.basename(dest.rstrip(os.sep))

    def clean(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    with tarfile.open(out, "w:gz") as t:
        t.add(dest, arcname=name, filter=clean)
    return out


def main(dest: str, tar: bool = False, force: bool = False) -> int:
    try:
        s = build(dest, tar=tar, force=force)
    except PackError as e:
        print(f"student-pack: {e}", file=sys.stderr)
        return 1
    size = sum(os.path.getsize(os.path.join(s["dest"], f)) for f in s["files"])
    print(f"wrote {s['dest']}: {len(s['files'])} files, {size / 1024:.0f} KiB, chapters {', '.join(s['chapters'])}; "
          f"{sum(s['hidden_removed'].values())} hidden case lists removed; from commit {s['commit']}")
    if "tar" in s:
        print(f"wrote {s['tar']} ({os.path.getsize(s['tar']) / 1024:.0f} KiB)")
    return 0
