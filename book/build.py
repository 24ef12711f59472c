"""Build the self-study edition: the five release notebooks as a static HTML site in build/book/.

    .venv/bin/python book/build.py            # what `make book` runs
    .venv/bin/python book/build.py --check    # exit 0 if build/book/ is up to date with its inputs

Nothing is executed. The build works on copies of the release notebooks (build/book-src/), which it
prepares for the web:
- links to the glossary and pictures are rewritten to the site's own copies (course/GLOSSARY.md,
  course/diagrams/*.png);
- every GPU measurement cell (one that calls `course.plots.example(NAME)` in CPU mode) gets as its
  output the example recorded on a real GPU: course/figures/NAME.png and the lines that run printed,
  labelled with the GPU and date from course/figures/figures.json;
- each exercise cell (a stub without the solution) is marked as a task, and each chapter gets a
  "Run it yourself" box under its title.
Then Sphinx + myst-nb (the engine of Jupyter Book 1) renders them (`nb_execution_mode = "off"`), with
MathJax served from the site (a copy of the jupyter-server-mathjax package's files), so that the
math typesets with the network off. The packages come from pyproject's `book` extra and are
pip-installed into this Python on first use.
"""
from __future__ import annotations

import argparse
import base64
import copy
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SRC = os.path.join(ROOT, "build", "book-src")
OUT = os.path.join(ROOT, "build", "book")
STAMP = os.path.join(OUT, ".flashcourse-book.json")
FIGURES = os.path.join(ROOT, "course", "figures")
DIAGRAMS = os.path.join(ROOT, "course", "diagrams")
GLOSSARY = os.path.join(ROOT, "course", "GLOSSARY.md")
REPO_URL_VAR = "FLASHCOURSE_REPO_URL"  # where readers clone the course from, if not the repository's Git remote


def repo_url(root: str = ROOT, environ=os.environ) -> str | None:
    """The address the "Run it yourself" box tells readers to clone: $FLASHCOURSE_REPO_URL, else the URL of this
    repository's Git remote (origin first), as a reader can use it: an SSH remote `git@host:path` becomes
    https://host/path, and a user name or token in an https URL is left out. None when there is neither, or the
    remote is a local path (the box then says how to get the course instead)."""
    if environ.get(REPO_URL_VAR, "").strip():
        return environ[REPO_URL_VAR].strip()
    try:
        names = subprocess.run(["git", "-C", root, "remote"], capture_output=True, text=True, timeout=10).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    for name in sorted(names, key=lambda n: (n != "origin", n != "upstream", n)):
        try:
            url = subprocess.run(["git", "-C", root, "remote", "get-url", name], capture_output=True, text=True,
                                 timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            continue
        m = re.fullmatch(r"(?:ssh://)?[^@/\s]+@([^:/\s]+)[:/](.+)", url)
        if m:
            return f"https://{m.group(1)}/{m.group(2).lstrip('/')}"
        m = re.fullmatch(r"(https?|git)://(?:[^@/\s]*@)?(.+)", url)
        if m:
            return f"{'https' if m.group(1) == 'git' else m.group(1)}://{m.group(2)}"
    return None


def how_to_get(url: str | None) -> dict:
    """The box's words for getting the course: a clone of `url`, or, without one, plain instructions."""
    if url:
        return {"intro": "", "laptop": f"git clone {url} flashcourse",
                "colab": f"!test -d /content/flashcourse || git clone --depth 1 {url} /content/flashcourse",
                "colab_note": "", "rented": f"`git clone {url} flashcourse`,"}
    return {"intro": ("This book does not know the course repository's address (it was built from a copy "
                      f"without a Git remote, and without {REPO_URL_VAR}): get a copy of the course's repository "
                      "from whoever gave you this book, or your instructor's student pack, into a folder named "
                      "`flashcourse`. Then:"),
            "laptop": "# your copy of the course is the folder flashcourse/",
            "colab": "# first upload your copy of the course to /content/flashcourse (the Files pane)",
            "colab_note": " (upload the course folder first: the cell below expects it in /content/flashcourse)",
            "rented": "copy the course's folder to the machine as `flashcourse`,"}

EXAMPLE_CALL = re.compile(r"""course\.plots\.example\(\s*["']([A-Za-z0-9_]+)["']""")
GLOSSARY_LINK = re.compile(r"\]\((?:\.\./)*course/GLOSSARY\.md(#[A-Za-z0-9_-]+)?\)")
DIAGRAM_LINK = re.compile(r"\]\((?:\.\./)*course/diagrams/([A-Za-z0-9_.-]+\.png)\)")
ANCHOR = re.compile(r'<a id="([A-Za-z0-9_-]+)"></a>')


def chapters() -> list[str]:
    rel = os.path.join(ROOT, "release")
    return sorted(d for d in os.listdir(rel) if os.path.isfile(os.path.join(rel, d, f"{d}.ipynb")))


# ---------------------------------------------------------------- packages (pyproject's `book` extra)

def book_requirements() -> list[str]:
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]["optional-dependencies"]["book"]


def missing_requirements(reqs: list[str]) -> list[str]:
    from packaging.requirements import Requirement
    out = []
    for spec in reqs:
        req = Requirement(spec)
        try:
            have = importlib.metadata.version(req.name)
        except importlib.metadata.PackageNotFoundError:
            out.append(spec)
            continue
        if req.specifier and not req.specifier.contains(have, prereleases=True):
            out.append(spec)
    return out


def ensure_packages() -> None:
    """pip-install the `book` extra's packages into this Python if any is missing (idempotent)."""
    need = missing_requirements(book_requirements())
    if not need:
        return
    print(f"book: installing {' '.join(need)}", flush=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", *need], check=True)
    importlib.invalidate_caches()


# ---------------------------------------------------------------- inputs and freshness

def input_files() -> list[str]:
    files = [os.path.join(ROOT, "release", ch, f"{ch}.ipynb") for ch in chapters()]
    files += [GLOSSARY, os.path.join(ROOT, "pyproject.toml")]
    for folder in (DIAGRAMS, FIGURES, HERE):
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not name.endswith(".pyc"):
                files.append(path)
    static = os.path.join(HERE, "_static")
    files += [os.path.join(static, n) for n in sorted(os.listdir(static))]
    return files


def inputs_digest() -> str:
    h = hashlib.sha256((repo_url() or "").encode())
    for path in input_files():
        h.update(os.path.relpath(path, ROOT).encode() + b"\0")
        with open(path, "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def is_fresh() -> bool:
    try:
        with open(STAMP) as f:
            return json.load(f).get("inputs") == inputs_digest()
    except (OSError, ValueError):
        return False


# ---------------------------------------------------------------- preparing the notebooks

def web_markdown(text: str) -> str:
    """Links to the repository's glossary and diagrams -> the site's copies."""
    text = GLOSSARY_LINK.sub(lambda m: f"]({'#gl-' + m.group(1)[1:] if m.group(1) else 'glossary.md'})", text)
    return DIAGRAM_LINK.sub(r"](diagrams/\1)", text)


def glossary_page() -> str:
    with open(GLOSSARY) as f:
        text = f.read()
    # `<a id="kernel"></a>**kernel.** ...` -> a Sphinx label `gl-kernel` the chapters link with (#gl-kernel)
    text = re.sub(r'^<a id="([A-Za-z0-9_-]+)"></a>', r"(gl-\1)=\n", text, flags=re.M)
    text = ANCHOR.sub("", text)
    text = re.sub(r"\]\(#([A-Za-z0-9_-]+)\)", r"](#gl-\1)", text)
    # the glossary's link to the picture folder: there the diagrams are on the chapter pages
    text = re.sub(r"\[`?course/diagrams/`?\]\(diagrams/\)", "`course/diagrams/` (shown in the chapters)", text)
    return text


def measured_label(entry: dict) -> str:
    return f"measured on {entry['device']} on {entry['date']} with the reference solutions"


def example_outputs(name: str, examples: dict) -> list:
    import nbformat
    entry = examples.get(name)
    if entry is None:
        raise SystemExit(f"book: a notebook shows example {name!r}, which course/figures/figures.json lacks")
    label = measured_label(entry)
    versions = ", ".join(f"{k} {entry[k]}" for k in ("torch", "triton") if entry.get(k))
    html = (f'<div class="fc-measured"><strong>Recorded output, {label}</strong>'
            f'{" (" + versions + ")" if versions else ""}. '
            "On a machine with an NVIDIA GPU this cell measures your own kernels instead.</div>")
    plain = f"Recorded output, {label}."
    outs = [nbformat.v4.new_output("display_data", data={"text/html": html, "text/plain": plain})]
    if entry.get("figure"):
        path = os.path.join(FIGURES, entry["figure"])
        with open(path, "rb") as f:
            png = base64.b64encode(f.read()).decode()
        outs.append(nbformat.v4.new_output("display_data", data={
            "image/png": png, "text/plain": f"<figure: {entry['figure']}, {label}>"}))
    printed = (entry.get("printed") or "").rstrip("\n")
    if printed:
        outs.append(nbformat.v4.new_output("stream", name="stdout", text=printed + "\n"))
    return outs


def run_box(chapter: str, examples: dict) -> str:
    nb = f"release/{chapter}/{chapter}.ipynb"
    gpus = sorted({e["device"] for e in examples.values() if e.get("chapter") == chapter})
    recorded = (f"show an example recorded on {' and '.join(gpus)}" if gpus
                else "are shown without output (they need an NVIDIA GPU)")
    get = how_to_get(repo_url())
    return f"""::::{{admonition}} Run it yourself
:class: tip fc-run

This page is the student notebook `{nb}`, shown without running it: exercise cells hold a stub
(no solutions here), and the GPU measurement cells {recorded}. To do the
exercises and get the tests' feedback, run the notebook. {get["intro"]}

- **On a laptop (CPU mode, no GPU needed).** On Linux with Python 3.11+, `make` and a C compiler:

  ```bash
  {get["laptop"]}
  cd flashcourse
  make lab
  ```

  `make lab` installs everything into `.venv` (a few minutes the first time) and opens JupyterLab on
  your working copy of the course, `work/`; open `{chapter}/{chapter}.ipynb` there. Triton kernels run
  in Triton's interpreter, CUDA cells are compiled by NVRTC and run on a CPU model of the GPU;
  correctness tests run, bandwidth tests say they need a GPU.
- **On Google Colab (a GPU runtime).** Open `{nb}` from the repository (File → Open notebook →
  GitHub){get["colab_note"]}, choose a GPU runtime, and make this the first cell:

  ```ipython
  import sys
  if "google.colab" in sys.modules:  # installs the course next to the notebook, once per runtime
      {get["colab"]}
      !pip install -q -e /content/flashcourse
      sys.path.insert(0, "/content/flashcourse")
      %cd /content/flashcourse
  ```

  Then run the cells in order: the set-up cell prints "GPU mode on" and the GPU's name.
- **On a rented GPU machine (NVIDIA, with PyTorch).** {get["rented"]}
  `cd flashcourse`, `pip install -e .` (keep the machine's CUDA build of torch), `jupyter lab` in the
  repository root, and open `{nb}`. The bandwidth cells and plots then measure **your** kernels
  against PyTorch and your GPU's copy bandwidth.
::::"""


def task_note(source: str) -> str:
    if "NOT_IMPLEMENTED();" in source:
        stub = "each `NOT_IMPLEMENTED();` in this CUDA cell"
    elif "NotImplementedError" in source:
        stub = "each `raise NotImplementedError()`"
    else:
        stub = "the placeholder"
    return f""":::{{admonition}} Exercise: your code goes in this cell
:class: note fc-task

In the notebook, replace {stub} with your code and run the cell; the test cells below it check your
work. The book shows the task, not its solution.
:::"""


def prepare_notebook(chapter: str, examples: dict) -> tuple[object, dict]:
    import nbformat
    src = os.path.join(ROOT, "release", chapter, f"{chapter}.ipynb")
    nb = nbformat.read(src, as_version=4)
    cells, seen = [], {"examples": [], "tasks": 0}
    for i, cell in enumerate(nb.cells):
        cell = copy.deepcopy(cell)
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "markdown":
            cell.source = web_markdown(cell.source)
            cells.append(cell)
            if i == 0:
                cells.append(nbformat.v4.new_markdown_cell(run_box(chapter, examples)))
            continue
        if cell.cell_type != "code":
            cells.append(cell)
            continue
        tags = list(cell.metadata.get("tags", []))
        if meta.get("solution"):
            cells.append(nbformat.v4.new_markdown_cell(task_note(cell.source)))
            tags.append("fc-exercise")
            seen["tasks"] += 1
        elif meta.get("grade"):
            tags.append("fc-test")
        cell.metadata["tags"] = tags
        cell.outputs, cell.execution_count = [], None
        names = EXAMPLE_CALL.findall(cell.source)
        for name in names:
            cell.outputs += example_outputs(name, examples)
            seen["examples"].append(name)
        if names:
            tags.append("fc-gpu-example")
            entry = examples[names[-1]]
            alt = f"{names[-1]}: the figure this cell drew, {measured_label(entry)}"
            cell.metadata["mystnb"] = {"image": {"alt": alt}}
        cells.append(cell)
    for n, cell in enumerate(cells):  # stable, unique ids after the inserted cells
        cell["id"] = f"{cell.get('id') or 'cell'}-{n}"[:64]
    nb.cells = cells
    nb.metadata.pop("flashcourse", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb, seen


INDEX = """# flashcourse · GPU kernels, self-study edition

An interactive course on GPU kernels, from the softmax formula to kernels that run at the speed of
memory: you write Triton kernels and CUDA C++ kernels, and the course's tests check them for
correctness and, on an NVIDIA GPU, for bandwidth (or TFLOP/s).

This site is the **self-study edition**: the chapter notebooks as students get them, rendered
for reading. It shows

- the text, the derivations and the diagrams of each chapter;
- each exercise as a task (the cell you fill in, with the tests that check it), without its solution;
- for each GPU measurement cell, an example of its output recorded on a real GPU with the course's
  reference solutions (the label says which GPU and when);
- under each chapter's title, how to run the notebook yourself: on a laptop in CPU mode, on Colab,
  or on a rented GPU.

Terms are defined in the [glossary](glossary.md), which every chapter links on first use.

```{{toctree}}
:maxdepth: 1
:caption: Chapters

{toc}
glossary
```
"""


def _mathjax_unused(folder: str, names: list[str]) -> list[str]:
    """What the site's MathJax never loads: other languages' messages, the SVG output's fonts (its code is not
    in the package), package clutter."""
    rel = folder.replace(os.sep, "/")
    out = [n for n in names if n in ("__pycache__", "tests") or n.endswith(".md")]
    if rel.endswith("/localization"):
        out += [n for n in names if n != "en"]
    if rel.endswith("/jax/output"):
        out += [n for n in names if n == "SVG"]
    return out


def prepare_sources() -> dict:
    import nbformat
    with open(os.path.join(FIGURES, "figures.json")) as f:
        examples = json.load(f)["examples"]
    shutil.rmtree(SRC, ignore_errors=True)
    os.makedirs(SRC)
    shutil.copy(os.path.join(HERE, "conf.py"), SRC)
    shutil.copytree(os.path.join(HERE, "_static"), os.path.join(SRC, "_static"))
    import jupyter_server_mathjax
    mathjax = os.path.join(os.path.dirname(jupyter_server_mathjax.__file__), "static")
    shutil.copytree(mathjax, os.path.join(SRC, "_static", "mathjax"), ignore=_mathjax_unused)
    os.makedirs(os.path.join(SRC, "diagrams"))
    for name in os.listdir(DIAGRAMS):
        if name.endswith(".png"):
            shutil.copy(os.path.join(DIAGRAMS, name), os.path.join(SRC, "diagrams", name))
    with open(os.path.join(SRC, "glossary.md"), "w") as f:
        f.write(glossary_page())
    report = {}
    for ch in chapters():
        nb, seen = prepare_notebook(ch, examples)
        nbformat.write(nb, os.path.join(SRC, f"{ch}.ipynb"))
        report[ch] = seen
    with open(os.path.join(SRC, "index.md"), "w") as f:
        f.write(INDEX.format(toc="\n".join(chapters())))
    return report


# ---------------------------------------------------------------- the build

def build(quiet: bool = False) -> dict:
    t0 = time.time()
    ensure_packages()
    report = prepare_sources()
    shutil.rmtree(OUT, ignore_errors=True)
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", "-d", os.path.join(SRC, ".doctrees"),
           "-w", os.path.join(SRC, "warnings.txt"), SRC, OUT]
    r = subprocess.run(cmd, cwd=SRC)
    with open(os.path.join(SRC, "warnings.txt")) as f:
        warnings = [w for w in f.read().splitlines() if w.strip()]
    if r.returncode:
        raise SystemExit(f"book: sphinx failed (exit {r.returncode})")
    if warnings:
        raise SystemExit("book: sphinx warnings (fix them):\n" + "\n".join(warnings))
    info = {"inputs": inputs_digest(), "seconds": round(time.time() - t0, 1), "chapters": report}
    with open(STAMP, "w") as f:
        json.dump(info, f, indent=1)
    if not quiet:
        n_ex = sum(len(v["examples"]) for v in report.values())
        n_task = sum(v["tasks"] for v in report.values())
        print(f"book: {len(report)} chapters, {n_task} exercise cells, {n_ex} recorded GPU examples -> "
              f"{os.path.relpath(OUT, os.getcwd())}/index.html ({info['seconds']} s)")
    return info


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 0 if build/book/ is up to date, 1 if not")
    ap.add_argument("--if-stale", action="store_true", help="build only when build/book/ is not up to date")
    args = ap.parse_args(argv)
    if args.check:
        return 0 if is_fresh() else 1
    if args.if_stale and is_fresh():
        print(f"book: {os.path.relpath(OUT, os.getcwd())} is up to date")
        return 0
    build()
    return 0


if __name__ == "__main__":
    sys.exit(main())
