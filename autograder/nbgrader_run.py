"""Running nbgrader as a subprocess, and throwaway course directories (for generate, validate, autograde)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _nbgrader(args: list[str], cwd: str, quiet: bool = True, progress: bool = False,
              check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")  # nbgrader runs `alembic`
    cmd = [sys.executable, "-m", "nbgrader", *args]
    if progress:  # echo nbgrader's per-notebook and per-check lines as they come
        lines = []
        with subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) as p:
            for line in p.stdout:
                lines.append(line)
                if "Autograding" in line or "[IsolatedRegrade]" in line or ": FAIL" in line or ": pass" in line:
                    print("  " + line.strip().split("] ", 1)[-1], flush=True)
        r = subprocess.CompletedProcess(cmd, p.returncode, "".join(lines), "")
    else:
        r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=quiet, text=True)
    log = os.environ.get("FLASHCOURSE_NBGRADER_LOG")
    if log:  # the whole of nbgrader's output, for diagnosis
        with open(log, "a") as f:
            f.write((r.stdout or "") + (r.stderr or ""))
    if r.returncode != 0 and check:
        out = (r.stdout or "") + (r.stderr or "")
        if progress and "Autograding" in out:  # some notebooks failed: they lose their points, the rest stand
            errors = [ln.strip() for ln in out.splitlines() if "| ERROR]" in ln or "Error" in ln.split(":")[0]]
            print("  nbgrader reported errors (those submissions score what the gradebook holds):\n    "
                  + "\n    ".join(errors[-12:]), flush=True)
            return r
        tail = "\n".join(out.splitlines()[-30:])
        raise SystemExit(f"nbgrader {' '.join(args)} failed (exit {r.returncode}):\n{tail}")
    return r


def _course_copy(tmp: str, chapter: str) -> None:
    """A throwaway nbgrader course directory holding one chapter's source."""
    shutil.copy(os.path.join(ROOT, "nbgrader_config.py"), tmp)
    shutil.copytree(os.path.join(ROOT, "source", chapter), os.path.join(tmp, "source", chapter),
                    ignore=shutil.ignore_patterns("*.nb.md", ".ipynb_checkpoints", "__pycache__"))
