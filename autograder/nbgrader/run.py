"""Running nbgrader as a subprocess, and throwaway course directories (for generate, validate, autograde)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

from autograder.layout import ROOT  # noqa: E402


def _nbgrader(args: list[str], cwd: str, quiet: bool = True, progress: bool = False,
              check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")  # nbgrader runs `alembic`
    cmd = [sys.executable, "-m", GUARD_MODULE, *args]  # nbgrader itself, refused without the course config
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


# ---------- nbgrader through a guard: autograde only with the course's own configuration ----------
#
# Without the course's nbgrader_config.py, `nbgrader autograde` falls back to its own Execute step: it runs every
# student notebook in a plain kernel with the instructor's rights, and the test cells score whatever that kernel
# makes of them (a blank notebook once got full marks so). Every nbgrader process flashcourse starts is therefore
# `python -m autograder.nbgrader.run ARGS`: nbgrader's own application, initialised as usual (every config file it
# would read, the command line last), and refused before it starts if autograde would run with anything but
# IsolatedRegrade in place of Execute.

GUARD_MODULE = "autograder.nbgrader.run"
JUDGE_STEP = "autograder.nbgrader.plugins.IsolatedRegrade"  # the preprocessor that must replace Execute (named,
# not imported: the plugin's module stands above this one, which class grading imports)


def autograde_problem(config) -> str | None:
    """Why nbgrader's autograde, configured by `config` (a traitlets Config), would run student code itself."""
    from nbgrader.preprocessors import Execute
    pre = config.Autograde.get("autograde_preprocessors") if "Autograde" in config else None
    if not pre:
        return ("no Autograde.autograde_preprocessors in the configuration: nbgrader's default would execute "
                "every notebook itself (no sandbox, no judge)")
    names = [p if isinstance(p, str) else f"{getattr(p, '__module__', '')}.{getattr(p, '__qualname__', p)}"
             for p in pre]
    if any(p is Execute or (isinstance(p, type) and issubclass(p, Execute)) for p in pre if not isinstance(p, str)) \
            or any(n.rsplit(".", 1)[-1] == "Execute" for n in names):
        return "Autograde.autograde_preprocessors contains nbgrader's Execute: it would run student code itself"
    if JUDGE_STEP not in names:
        return "Autograde.autograde_preprocessors lacks flashcourse's IsolatedRegrade (the judge's verdicts)"
    return None


def course_config_problem(course: str) -> str | None:
    """Why `nbgrader autograde` in the course directory `course` would not grade through flashcourse's judge
    (None when it would): nbgrader's configuration loaded there exactly as nbgrader loads it."""
    if not os.path.isfile(os.path.join(course, "nbgrader_config.py")):
        return (f"{course} has no nbgrader_config.py: copy the course's (from {ROOT}) into it; without it nbgrader "
                "would execute every submission itself, unsandboxed, and score what that execution prints")
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", GUARD_MODULE, "--check-only", "autograde"], cwd=course, env=env,
                       capture_output=True, text=True)
    if r.returncode == 0:
        return None
    return (r.stdout + r.stderr).strip().splitlines()[-1] if (r.stdout + r.stderr).strip() else \
        f"nbgrader's configuration in {course} could not be checked (exit {r.returncode})"


def require_course_config(course: str) -> None:
    """Stop (SystemExit, a clear message) unless nbgrader in `course` grades through flashcourse's judge."""
    why = course_config_problem(course)
    if why:
        raise SystemExit(f"flashcourse: refusing to grade: {why}")


def _guarded_main(argv: list[str]) -> int:
    """What `python -m nbgrader ARGS` does (NbGraderApp.launch_instance), with the autograde check between
    nbgrader's initialisation (every config file read) and its start."""
    from jupyter_core.application import NoStart
    from jupyter_core.utils import ensure_event_loop
    from nbgrader.apps.nbgraderapp import NbGraderApp
    check_only = argv[:1] == ["--check-only"]
    argv = argv[1:] if check_only else argv
    loop = ensure_event_loop()
    app = NbGraderApp.instance()
    try:
        app.initialize(argv)
    except NoStart:
        return 0
    sub = app.subapp
    if argv[:1] == ["autograde"]:
        why = autograde_problem(sub.config if sub is not None else app.config)
        if why:
            print(f"flashcourse: refusing to run nbgrader autograde in {os.getcwd()}: {why}", file=sys.stderr)
            return 3
    if check_only:
        return 0
    try:
        app.start()
    except NoStart:  # the subcommand ran (jupyter_core's way of ending a subapp)
        pass
    loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(_guarded_main(sys.argv[1:]))
