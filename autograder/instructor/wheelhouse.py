"""`flashcourse wheelhouse DIR`: the wheels grading needs on an offline GPU node.

The node already has torch, triton, cupy and numpy (Python 3.12, manylinux x86_64). Grading
needs nbgrader (its autograde path: nbconvert, nbclient, sqlalchemy, alembic, jupyter_server's
imports), a Jupyter kernel (ipykernel) and, for nbgrader's feedback pages, jupyter-server-mathjax
(its MathJax is copied beside the pages). JupyterLab and the packages only it uses are left out:
nobody opens a browser there. Install on the node with
    pip install --no-index --no-deps DIR/*.whl && pip install --no-index --find-links DIR --no-deps -e .
(the second finds setuptools in DIR: pip builds the project in an isolated environment, offline too)

--bench adds the `bench` extra's wheels (Liger-Kernel, a peer in `flashcourse bench --report`), without their
dependencies: the node's torch and triton serve them. Without it the report records Liger-Kernel as not installed.
"""
from __future__ import annotations

import glob
import os

from autograder.layout import ROOT
import re
import subprocess
import sys

# jupyter-server-mathjax: the MathJax that `nbgrader generate_feedback` copies beside its pages (3 MB).
WANT = ["nbgrader==0.9.6", "ipykernel", "jupyter-server-mathjax==0.2.6"]
# What `pip install -e .` builds the project with (pip's build isolation fetches them, from DIR offline).
BUILD = ["setuptools>=61", "wheel"]
# Pulled in by nbgrader's requirements but never imported when generating or autograding.
# rfc3987_syntax (and its lark): jsonschema imports it whenever present, building 38 Lark grammars, about 2-3 s in
# every process that imports nbformat, to check "iri" formats nothing here uses (the Makefile uninstalls it too).
LEAVE_OUT = {"jupyterlab", "babel", "jupyterlab_server", "jupyter_lsp", "json5", "async_lru",
             "notebook_shim", "jupyterlab_widgets", "widgetsnbextension", "ipywidgets", "rfc3987_syntax", "lark"}
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64",
             "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_5_x86_64"]
LIMIT_MB = 60


def bench_requirements() -> list[str]:
    """The `bench` extra's requirements, pinned in pyproject.toml (their one source): from the installed project's
    metadata, or from pyproject.toml beside this package where the project is not installed. Downloaded with
    --no-deps: their own requirements are torch and triton, which the node has."""
    import importlib.metadata
    try:
        reqs = importlib.metadata.requires("flashcourse") or []
        bench = [r.split(";")[0].strip() for r in reqs if "extra" in r and '"bench"' in r.replace("'", '"')]
        if bench:
            return bench
    except importlib.metadata.PackageNotFoundError:
        pass
    import tomllib
    path = os.path.join(ROOT, "pyproject.toml")
    if not os.path.exists(path):
        raise SystemExit(f"wheelhouse --bench: the project is not installed and {path} is missing: run it from a "
                         "checkout of the course (the bench extra is declared in its pyproject.toml)")
    with open(path, "rb") as f:
        return list(tomllib.load(f)["project"]["optional-dependencies"]["bench"])


def _dist(wheel: str) -> str:
    return re.sub(r"[-.]+", "_", os.path.basename(wheel).split("-")[0]).lower()


def build_wheelhouse(dest: str, python_version: str = "3.12", bench: bool = False) -> int:
    os.makedirs(dest, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--python-version",
           python_version, "--implementation", "cp", "-d", dest, *WANT]
    for p in PLATFORMS:
        cmd += ["--platform", p]
    subprocess.run(cmd, check=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--no-deps", "-d", dest,
                    *BUILD], check=True)
    if bench:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--no-deps", "-d", dest,
                        *bench_requirements()], check=True)
    for whl in glob.glob(os.path.join(dest, "*.whl")):
        if _dist(whl) in LEAVE_OUT:
            os.remove(whl)
    wheels = glob.glob(os.path.join(dest, "*.whl"))
    mb = sum(os.path.getsize(w) for w in wheels) / 2**20
    print(f"{len(wheels)} wheels, {mb:.1f} MB in {dest}")
    if mb > LIMIT_MB:
        print(f"over the {LIMIT_MB} MB budget")
        return 1
    return 0
