"""The sandbox around every process that runs student code (a runner, nbgrader's Execute kernel).

    python -m autograder.sandbox [--hide PATH ...] [--home DIR] [--copy FILE] -- COMMAND ...

run as root inside fresh namespaces (`unshare --pid --fork --kill-child --mount-proc [--net]`, see
`wrap`): it hides the instructor's files (solutions, reference kernels, known-wrong submissions,
the gradebook, submissions) under empty tmpfs mounts or /dev/null, makes every file system
read-only except its private HOME (under /dev/shm; also its temporary directory and Triton's and
CuPy's caches), sets resource limits, and executes COMMAND with no capabilities at all (through
`setpriv`): it can neither undo those mounts nor write the course directory, the gradebook or the
grader's source, and in its own PID namespace it cannot see or signal any process outside. When
the process that `unshare` started dies, the kernel kills every process of its PID namespace: a
detached daemon or a double fork does not survive the grader's kill.

Where this is not available (not root, no `unshare`), `wrap` returns the command unchanged and
`status()` says why; the judge's guarantees (verdict, references, verification) hold anyway,
since they never depend on the runner. Say so loudly: `flashcourse` prints `status()`.
"""
from __future__ import annotations

import os
import shutil
import sys

# Paths, relative to a course directory (and to the repository), that student code must not see.
HIDDEN = ("source", "kernels_ref", "autograder/submissions", "submitted", "autograded", "feedback",
          "gradebook.db", "nbgrader_config.py", ".git", "benchmarks", "tests")
_DISABLE = "FLASHCOURSE_SANDBOX"  # =0 switches it off (for debugging); say so in the log


def status() -> tuple[bool, str]:
    """(available, why) for this machine and user."""
    if os.environ.get(_DISABLE) == "0":
        return False, f"sandbox switched off ({_DISABLE}=0)"
    if sys.platform != "linux":
        return False, "sandbox needs Linux namespaces"
    if os.geteuid() != 0:
        return False, ("sandbox needs root to create namespaces and drop to an unprivileged user: student code "
                       "runs with this user's rights (run the grader as root, or in a container)")
    for tool in ("unshare", "setpriv", "mount"):
        if not shutil.which(tool):
            return False, f"sandbox needs util-linux `{tool}`"
    return True, "namespaces (pid, mount, net) + read-only file systems + no capabilities + private HOME + rlimits"


def hidden_paths(*roots: str) -> list[str]:
    out = []
    for root in roots:
        for rel in HIDDEN:
            p = os.path.join(os.path.abspath(root), rel)
            if os.path.lexists(p) and p not in out:
                out.append(p)
    return out


def wrap(argv: list[str], *, home: str, hide: list[str], network: bool = False,
         copy: list[str] = ()) -> list[str]:
    """The command line that runs `argv` inside the sandbox (or `argv` itself where none is available)."""
    ok, _ = status()
    if not ok:
        return list(argv)
    # --mount-proc: a /proc of the new PID namespace (CUDA fails to initialise without it: error 304)
    ns = ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc"] + ([] if network else ["--net"])
    inner = [sys.executable, "-m", "autograder.sandbox", "--home", home]
    for p in hide:
        inner += ["--hide", p]
    for f in copy:
        inner += ["--copy", f]
    return ns + ["--"] + inner + ["--"] + list(argv)


def _limits() -> None:
    import resource
    for what, value in ((resource.RLIMIT_CORE, 0), (resource.RLIMIT_NPROC, 512),
                        (resource.RLIMIT_FSIZE, 16 << 30), (resource.RLIMIT_NOFILE, 4096)):
        soft, hard = resource.getrlimit(what)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(what, (cap, cap))


def _mount(*args: str) -> None:
    import subprocess
    r = subprocess.run(["mount", *args], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"sandbox: mount {' '.join(args)} failed: {r.stderr.strip()}")


def _hide(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        _mount("-t", "tmpfs", "-o", "size=4k,mode=0555", "flashcourse-hidden", path)
    else:
        _mount("--bind", "/dev/null", path)


_WRITABLE = ("/proc", "/sys", "/dev")  # and what lies below them (/dev/shm holds HOME)


def _read_only_everywhere(home: str) -> None:
    """Remount every mount point read-only, except /proc, /sys, /dev and the one that holds HOME."""
    with open("/proc/self/mounts") as f:
        points = [line.split()[1].replace("\\040", " ") for line in f]
    home_mount = max((p for p in points if home == p or home.startswith(p.rstrip("/") + "/")), key=len)
    for p in sorted(set(points), key=len):
        if p == home_mount or any(p == w or p.startswith(w + "/") for w in _WRITABLE):
            continue
        if p.startswith("/dev/shm") or "flashcourse-hidden" in p:
            continue
        import subprocess
        subprocess.run(["mount", "-o", "remount,bind,ro", p], capture_output=True)


def main(argv: list[str]) -> int:
    hide, copy, home = [], [], None
    i = 0
    while i < len(argv) and argv[i] != "--":
        flag, value = argv[i], argv[i + 1]
        {"--hide": hide.append, "--copy": copy.append}.get(flag, lambda v: None)(value)
        if flag == "--home":
            home = value
        i += 2
    cmd = argv[i + 1:]
    if not cmd or home is None:
        print("usage: python -m autograder.sandbox --home DIR [--hide PATH ...] -- COMMAND ...", file=sys.stderr)
        return 2
    os.makedirs(home, exist_ok=True)
    for name in copy:  # files the command needs from a place that is hidden or read-only
        dst = os.path.join(home, os.path.basename(name))
        shutil.copy(name, dst)
        cmd = [dst if a == name else a for a in cmd]
    for p in hide:
        if os.path.lexists(p):
            _hide(p)
    tmp = os.path.join(home, "tmp")
    os.makedirs(tmp, exist_ok=True)
    _read_only_everywhere(home)
    env = dict(os.environ, HOME=home, TMPDIR=tmp, TRITON_CACHE_DIR=os.path.join(home, ".triton"),
               CUPY_CACHE_DIR=os.path.join(home, ".cupy"), FLASHCOURSE_CACHE=os.path.join(home, ".cache"),
               FLASHCOURSE_SANDBOXED="1")
    _limits()
    os.chdir(home)
    drop = ["setpriv", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]
    os.execvpe(drop[0], drop + cmd, env)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
