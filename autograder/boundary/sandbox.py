"""The sandbox around every process that runs student code (a runner, nbgrader's Execute kernel).

    python -m autograder.boundary.sandbox [--hide PATH ...] [--home DIR] [--copy FILE] -- COMMAND ...

run as root inside fresh namespaces (`unshare --pid --fork --kill-child --mount-proc --uts --ipc [--net]`, see
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
import signal
import sys

from autograder.layout import INSTRUCTOR_DATA, ROOT

# Paths, relative to a course directory (and to the repository), that student code must not see: the
# instructor's folders by role (autograder.layout), nbgrader's class data, and the repository's own records.
HIDDEN = (*INSTRUCTOR_DATA, "submitted", "autograded", "feedback", "gradebook.db", "nbgrader_config.py", ".git",
          "benchmarks", "tests", "results", "feedback_html")
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
    return True, ("namespaces (pid, mount, uts, ipc, net) + read-only file systems + user nobody (where the course "
                  "and Python are readable to it) without capabilities + private HOME + rlimits")


def hidden_paths(*roots: str) -> list[str]:
    out = []
    for root in roots:
        for rel in HIDDEN:
            p = os.path.join(os.path.abspath(root), rel)
            if os.path.lexists(p) and p not in out:
                out.append(p)
    return out


def wrap(argv: list[str], *, home: str, hide: list[str], network: bool = False,
         copy: list[str] = (), packages: tuple = (), memory: int = 0) -> list[str]:
    """The command line that runs `argv` inside the sandbox (or `argv` itself where none is available)."""
    ok, _ = status()
    if not ok:
        return list(argv)
    # --mount-proc: a /proc of the new PID namespace (CUDA fails to initialise without it: error 304)
    ns = ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "--uts", "--ipc"]
    ns += [] if network else ["--net"]
    inner = [sys.executable, "-m", "autograder.boundary.sandbox", "--home", home]
    for p in hide:
        inner += ["--hide", p]
    for f in copy:
        inner += ["--copy", f]
    for name in packages:
        inner += ["--package", name]
    if memory:
        inner += ["--memory", str(int(memory))]
    return ns + ["--"] + inner + ["--"] + list(argv)


def limits(memory: int = 0) -> None:
    """The runner's resource limits. `memory` (bytes, 0: none): RLIMIT_DATA, for a runner that is not in a memory
    cgroup of its own (autograder.judge.session: a cgroup v2 `memory.max` where one can be made, which also counts
    page cache and tmpfs pages). Not RLIMIT_AS: on a GPU the CUDA driver reserves far more address space than it
    uses (its unified address range, PROT_NONE, tens of GiB or more), and an address-space limit breaks it, while
    RLIMIT_DATA counts only private writable mappings (malloc, NumPy's arrays, anonymous mmaps): CUDA's reservations
    and its shared device mappings are neither. (To be confirmed on a GPU: tests/test_runner_limits.py.)"""
    import resource
    caps = [(resource.RLIMIT_CORE, 0), (resource.RLIMIT_NPROC, 512), (resource.RLIMIT_FSIZE, 16 << 30),
            (resource.RLIMIT_NOFILE, 4096)]
    if memory:
        caps.append((resource.RLIMIT_DATA, int(memory)))
    for what, value in caps:
        soft, hard = resource.getrlimit(what)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(what, (cap, cap))


def mount_tmpfs(path: str, size: int) -> None:
    """A runner's HOME: a tmpfs of `size` bytes of its own at `path` (mounted by the judge, in its own mount namespace,
    before the runner starts: the runner's namespace, copied from it, shares it, so both see the buffers)."""
    _mount("flashcourse-home", path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={int(size)},mode=0700")


def resize_tmpfs(path: str, size: int) -> None:
    _mount("flashcourse-home", path, None, MS_REMOUNT | MS_NOSUID | MS_NODEV, f"size={int(size)}")


def unmount(path: str) -> None:
    """Detach a mount (MNT_DETACH: gone from sight at once, freed when nothing holds it)."""
    _libc().umount2(path.encode(), 2)


def limit_memory(memory: int) -> None:
    """RLIMIT_DATA only (a runner outside the sandbox: see limits)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = int(memory) if hard == resource.RLIM_INFINITY else min(int(memory), hard)
    resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))


# -- memory cgroups (v2): the judge makes one per runner where it can; the runner joins it before it forks --
def cgroup_root() -> str | None:
    """A cgroup v2 directory under which this (root) process may make one memory-limited cgroup per runner, or None
    (no cgroup v2 mounted, no memory controller, not writable: then RLIMIT_DATA, see limits). Tried in order:
    FLASHCOURSE_CGROUP (an instructor's delegated cgroup), the parent of the judge's own cgroup (its siblings may
    have memory limits wherever the judge's has the memory controller), the judge's own cgroup (only where it has
    no processes of its own: cgroup v2 allows controllers below a cgroup only then)."""
    if sys.platform != "linux" or os.geteuid() != 0:
        return None
    mount = None
    try:
        with open("/proc/self/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 2 and parts[2] == "cgroup2":
                    mount = parts[1]
                    break
        if mount is None:
            return None
        with open("/proc/self/cgroup") as f:
            mine = next((line.strip()[3:] for line in f if line.startswith("0::")), None)
    except OSError:
        return None
    want = os.environ.get("FLASHCOURSE_CGROUP")
    candidates = [want] if want else []
    if mine is not None:
        here = os.path.join(mount, mine.lstrip("/"))
        candidates += [os.path.dirname(here.rstrip("/")), here]
    for c in candidates:
        if c and _cgroup_usable(c):
            return c
    return None


def _cgroup_usable(path: str) -> bool:
    """Whether `path` is a cgroup v2 directory whose children can have memory limits (memory in its
    subtree_control, or addable there) and we may make children in."""
    try:
        with open(os.path.join(path, "cgroup.controllers")) as f:
            if "memory" not in f.read().split():
                return False
        sub = os.path.join(path, "cgroup.subtree_control")
        with open(sub) as f:
            if "memory" not in f.read().split():
                with open(sub, "w") as g:  # fails where the cgroup has processes of its own (no internal processes)
                    g.write("+memory")
        return os.access(path, os.W_OK)
    except OSError:
        return False


def make_cgroup(root: str, name: str, memory: int) -> str:
    """A new cgroup under root with memory.max = memory bytes and no swap; its path."""
    path = os.path.join(root, name)
    os.mkdir(path)
    try:
        with open(os.path.join(path, "memory.max"), "w") as f:
            f.write(str(int(memory)))
        try:
            with open(os.path.join(path, "memory.swap.max"), "w") as f:
                f.write("0")
        except OSError:
            pass  # no swap accounting here: nothing to swap to either, or the limit still holds for RAM
    except BaseException:
        os.rmdir(path)
        raise
    return path


def join_cgroup(path: str) -> None:
    """Move this process into the cgroup (its children follow it from now on)."""
    with open(os.path.join(path, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))


def cgroup_oom_kills(path: str) -> int:
    """How many processes of the cgroup the kernel killed for memory (memory.events oom_kill)."""
    try:
        with open(os.path.join(path, "memory.events")) as f:
            for line in f:
                k, _, v = line.partition(" ")
                if k == "oom_kill":
                    return int(v)
    except (OSError, ValueError):
        pass
    return 0


def remove_cgroup(path: str) -> None:
    """Remove a runner's cgroup once its processes are gone (killed: retried briefly while they exit)."""
    import time
    for _ in range(100):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            try:
                with open(os.path.join(path, "cgroup.kill"), "w") as f:
                    f.write("1")
            except OSError:
                pass
            time.sleep(0.01)


# -- a NumPy/Python exercise's runner sees no Python package but NumPy (autograder.judge.session, NUMPY_RUNNERS) --
def package_dirs() -> list[str]:
    """Every directory of installed Python packages this interpreter (or the system's) would look in: the
    site-packages and dist-packages of its prefixes, of the system's Pythons, the user's, and any on sys.path."""
    import glob
    import site
    found = [p for p in sys.path if p and os.path.basename(p.rstrip("/")) in ("site-packages", "dist-packages")]
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, "/usr", "/usr/local"}:
        for kind in ("site-packages", "dist-packages"):
            found += glob.glob(os.path.join(prefix, "lib*", "python3*", kind))
            found += glob.glob(os.path.join(prefix, "lib*", "python3", kind))
    try:
        found.append(site.getusersitepackages())
    except (AttributeError, OSError):
        pass
    out = []
    for p in found:
        q = os.path.realpath(p)
        if os.path.isdir(q) and q not in out:
            out.append(q)
    return out


def _allowed(name: str, packages) -> bool:
    """Whether an entry of a package directory belongs to one of `packages` (numpy: numpy/, numpy.libs/ with its
    vendored OpenBLAS, numpy-2.4.6.dist-info/)."""
    base = name.split("-", 1)[0]
    return any(base == p or base.startswith(p + ".") for p in packages)



def _cover_keeping(label: str, directory: str, keep: dict) -> None:
    """Mount an empty tmpfs over `directory`, then bind back each entry of `keep` ({name: an O_PATH fd opened
    before the cover}) onto a placeholder of its kind; the fds are closed."""
    try:
        _mount(label, directory, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
        for name, fd in keep.items():
            target = os.path.join(directory, name)
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.mkdir(target, 0o755)
            else:
                os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
    finally:
        for fd in keep.values():
            os.close(fd)

def only_packages(packages) -> list[str]:
    """In this mount namespace: cover every package directory (package_dirs) with an empty tmpfs and bind back only
    the entries of `packages`: torch, SciPy, CuPy, Triton and everything else installed are not on this file
    system any more (not importable by path either, nor loadable with ctypes). The directories covered."""
    covered = []
    for d in sorted(package_dirs(), key=len):
        try:
            keep = {n: os.open(os.path.join(d, n), os.O_PATH | os.O_NOFOLLOW) for n in os.listdir(d)
                    if _allowed(n, packages)}
        except OSError:
            continue
        _cover_keeping("flashcourse-packages", d, keep)
        covered.append(d)
    return covered


# -- the system calls, through libc (no `mount`/`setpriv` processes: the runner zygote, autograder.runner.zygote,
# enters the sandbox in a forked child, without an exec) --
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
# every namespace a runner gets: mounts, host name, System V IPC and POSIX message queues, PIDs, network
NAMESPACES = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND = 1, 2, 4, 8, 32, 4096
MS_NOATIME, MS_NODIRATIME, MS_REC, MS_PRIVATE = 1024, 2048, 16384, 1 << 18
MS_RELATIME, MS_STRICTATIME = 1 << 21, 1 << 24
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 1, 24, 38, 47, 4
PR_SET_DUMPABLE = 4
_LIBC = []


def _libc():
    if not _LIBC:
        import ctypes
        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def _check(rc: int, what: str) -> None:
    if rc != 0:
        import ctypes
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = (lambda s: None if s is None else s.encode())
    _check(_libc().mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def unshare(flags: int) -> None:
    _check(_libc().unshare(flags), "unshare")


def prctl(option: int, arg: int = 0) -> None:
    import ctypes
    _check(_libc().prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)),
           f"prctl({option})")


def private_mounts() -> None:
    """Mount events of this namespace stay in it (what `unshare --mount` does)."""
    _mount("none", "/", None, MS_REC | MS_PRIVATE)


def mount_proc() -> None:
    """A /proc of this PID namespace (`unshare --mount-proc`; CUDA fails to initialise without it: error 304)."""
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def _hide(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            _mount("flashcourse-hidden", path, "tmpfs", 0, "size=4k,mode=0555")
        else:
            _mount("/dev/null", path, None, MS_BIND)
    except OSError as e:
        raise SystemExit(f"sandbox: hiding {path} failed: {e}") from None


# The runner's private /dev/shm (PyTorch's and the CPU layer's shared memory): capped, as its HOME is
# (autograder.judge.session: HOME_BYTES); a memory cgroup, where there is one, counts its pages too.
SHM_SIZE = os.environ.get("FLASHCOURSE_RUNNER_SHM", "1g")

# Mount points left writable (and what lies below them): the device nodes (CUDA opens /dev/nvidia*) and
# /proc of the new PID namespace. /proc/sys, /sys, /dev/shm and everything else become read-only; HOME
# is bind-mounted onto itself first, so it stays writable and cannot be renamed or replaced by a link.
_WRITABLE = ("/proc", "/dev")
_READ_ONLY_BELOW = ("/proc/sys", "/proc/sysrq-trigger", "/sys")
# statvfs flags -> the mount flags a read-only bind remount keeps (a locked flag must be kept)
_KEEP = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
         (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME))


def _remount_read_only(p: str) -> None:
    try:
        have = os.statvfs(p).f_flag
        keep = sum(m for s, m in _KEEP if have & s)
        keep |= 0 if have & (os.ST_NOATIME | os.ST_RELATIME) else MS_STRICTATIME
        _mount("none", p, None, MS_REMOUNT | MS_BIND | MS_RDONLY | keep)
    except OSError:
        pass  # a mount point that cannot be remounted (gone, or not ours) stays as it is


def _read_only_everywhere(home: str) -> None:
    """Remount every mount point read-only, except HOME (made its own mount first), /dev (device nodes, a
    private /dev/shm) and this namespace's /proc; /proc/sys and /sys are read-only too."""
    # A private /dev/shm (PyTorch's and the CPU layer's shared memory live there): other runners' and the
    # judge's files there are out of sight. HOME, if it lies there, is bound back in from a descriptor.
    fd = os.open(home, os.O_PATH | os.O_DIRECTORY)
    try:
        if os.path.isdir("/dev/shm"):
            _mount("flashcourse-shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={SHM_SIZE}")
        os.makedirs(home, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", home, None, MS_BIND)  # HOME its own mount point (/tmp on / too)
    finally:
        os.close(fd)
    for p in _READ_ONLY_BELOW:
        if os.path.exists(p) and p.startswith("/proc"):
            try:
                _mount(p, p, None, MS_BIND)  # a mount point of its own, so that it can be made read-only
            except OSError:
                pass
    with open("/proc/self/mounts") as f:
        points = [line.split()[1].replace("\\040", " ") for line in f]
    for p in sorted(set(points), key=len):
        if p == home or "flashcourse-hidden" in p:
            continue
        below_ro = any(p == r or p.startswith(r + "/") for r in _READ_ONLY_BELOW)
        if not below_ro and any(p == w or p.startswith(w + "/") for w in _WRITABLE):
            continue
        _remount_read_only(p)


def environment(home: str) -> dict:
    """What changes in the environment of a sandboxed process: its HOME, temporary directory and caches."""
    return {"HOME": home, "TMPDIR": os.path.join(home, "tmp"), "TRITON_CACHE_DIR": os.path.join(home, ".triton"),
            "CUPY_CACHE_DIR": os.path.join(home, ".cupy"), "FLASHCOURSE_CACHE": os.path.join(home, ".cache"),
            "FLASHCOURSE_SANDBOXED": "1"}


# The user a runner becomes ("nobody"): it owns no file of the course, the grader, the gradebook or the
# instructor's home, so what the mounts leave readable to uid 0 (root's 0600 files) it cannot read.
RUNNER_UID = 65534
UID_WHY: list[str] = []  # why this runner kept uid 0, if it did (for the judge's log)
START_UID = [os.getuid()]  # the uid the runner had when it started serving (reported to the judge)


def needed_paths(home: str) -> list[str]:
    """What a runner must reach: the course library, Python, its packages, and HOME (as given and as resolved)."""
    root = ROOT
    out = []
    for p in [root, home, sys.executable, sys.prefix, sys.base_prefix, sys.exec_prefix] + sys.path:
        if not p or not os.path.exists(p):
            continue
        for q in (os.path.abspath(p), os.path.realpath(p)):
            if q not in out:
                out.append(q)
    return out


def _closed_ancestors(paths: list[str]) -> dict[str, set[str]]:
    """Directories above a needed path that other users may not enter (no o+x; /root, a `mktemp -d`), each
    with the names right below it that lead to needed paths."""
    import stat
    out: dict[str, set[str]] = {}
    for p in paths:
        parts = [x for x in p.split("/") if x]
        for i in range(1, len(parts)):
            a = "/" + "/".join(parts[:i])
            try:
                mode = os.stat(a).st_mode
            except OSError:
                break
            if stat.S_ISDIR(mode) and not mode & stat.S_IXOTH:
                out.setdefault(a, set()).add(parts[i])
                break  # the first closed one; deeper ones are seen in the next round, through its new mount
    return out


def open_closed_parents(paths: list[str]) -> list[str]:
    """In this mount namespace: cover each closed directory above a needed path with an empty tmpfs that anyone
    may enter, and bind back only what leads to the needed paths. The rest of such a directory (root's home
    with its keys, another user's files) is out of sight, and the runner's user can reach what it needs.
    The directories covered."""
    covered = []
    for _ in range(16):
        todo = _closed_ancestors(paths)
        if not todo:
            break
        for a in sorted(todo, key=len):
            _cover_keeping("flashcourse-open", a, {name: os.open(os.path.join(a, name), os.O_PATH | os.O_NOFOLLOW)
                                                   for name in todo[a]})
            covered.append(a)
    return covered


def can_become(uid: int, paths: list[str]) -> str | None:
    """None if a process of `uid` can read (and enter) every path; else what it cannot (tried in a fork)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        bad = "?"
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            bad = next((p for p in paths if not os.access(p, os.R_OK | (os.X_OK if os.path.isdir(p) else 0))), "")
        finally:
            os.write(w, bad.encode()[:4000])
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        bad = f.read().decode(errors="replace")
    os.waitpid(pid, 0)
    return bad or None


def give_home(home: str, uid: int) -> None:
    """HOME and what is in it belong to the runner's user."""
    for d, dirs, files in os.walk(home):
        for name in [d] + [os.path.join(d, x) for x in dirs + files]:
            os.lchown(name, uid, uid)


def enclose(home: str, hide: list[str], packages: tuple = (), memory: int = 0) -> int:
    """Inside fresh mount (and PID, with /proc mounted) namespaces: hide the instructor's files, make every file
    system read-only but HOME's, set the resource limits and move to HOME. Capabilities are still there.
    The uid the process should take when it drops them: RUNNER_UID where that user can reach everything it
    needs (HOME then belongs to it), else 0 (UID_WHY says why)."""
    os.makedirs(home, exist_ok=True)
    os.makedirs(os.path.join(home, "tmp"), exist_ok=True)
    paths = needed_paths(home)
    open_closed_parents(paths)
    give_home(home, RUNNER_UID)
    bad = can_become(RUNNER_UID, paths)
    uid = RUNNER_UID if bad is None else 0
    if bad is not None:
        give_home(home, 0)
        UID_WHY[:] = [f"{bad} is not readable by other users"]
    for p in hide:
        if os.path.lexists(p):
            _hide(p)
    if packages:
        only_packages(packages)
    _read_only_everywhere(home)
    limits(memory)
    os.chdir(home)
    return uid


def drop_capabilities(uid: int = 0) -> None:
    """Every capability gone for good, without an exec (what `setpriv --no-new-privs --inh-caps=-all
    --bounding-set=-all [--reuid U --regid U --clear-groups]` gives the program it executes): no new
    privileges, an empty bounding set, no ambient capabilities, the user `uid` (no supplementary groups) if
    not 0, and empty effective, permitted and inheritable sets."""
    import ctypes
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except OSError:
        last = 63
    for cap in range(last + 1):
        prctl(PR_CAPBSET_DROP, cap)
    try:
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    except OSError:
        pass  # a kernel without ambient capabilities has none to clear
    if uid:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # the kernel clears the permitted and effective sets
        # a change of credentials makes the process non-dumpable, and its /proc/self files root's: give them
        # back to it (the runner resets its own peak memory through /proc/self/clear_refs); core dumps stay
        # off (RLIMIT_CORE 0), and no other process of this user is in its PID namespace to attach
        prctl(PR_SET_DUMPABLE, 1)
    START_UID[0] = os.getuid()

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header, data = Header(0x20080522, 0), (Data * 2)()  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words
    _check(_libc().capset(ctypes.byref(header), data), "capset")


def capabilities() -> dict:
    """CapInh, CapPrm, CapEff, CapBnd and CapAmb of this process, as numbers (from /proc/self/status)."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Cap"):
                k, v = line.split(":")
                out[k] = int(v, 16)
    return out


# -- a runner stays in its process group, stopped (autograder.judge.session freezes it between the judge's requests) --
# per architecture: the audit value, then the syscall numbers (x86_64's x32 calls, nr >= 0x40000000, are refused)
_SYSCALLS = {
    "x86_64": {"audit": 0xC000003E, "setsid": 112, "setpgid": 109, "seccomp": 317, "ptrace": 101,
               "io_uring_setup": 425, "kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129,
               "rt_tgsigqueueinfo": 297, "pidfd_send_signal": 424, "timer_create": 222, "mq_notify": 244,
               "fcntl": 72, "prctl": 157, "clone": 56, "clone3": 435},
    "aarch64": {"audit": 0xC00000B7, "setsid": 157, "setpgid": 154, "seccomp": 277, "ptrace": 117,
                "io_uring_setup": 425, "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138,
                "rt_tgsigqueueinfo": 240, "pidfd_send_signal": 424, "timer_create": 107, "mq_notify": 184,
                "fcntl": 25, "prctl": 167, "clone": 220, "clone3": 435},
}
# the argument that is the signal number, per call that sends one
_SIGNAL_ARG = {"kill": 1, "tkill": 1, "tgkill": 2, "rt_sigqueueinfo": 1, "rt_tgsigqueueinfo": 2,
               "pidfd_send_signal": 1}
_REFUSED = ("setsid", "setpgid", "ptrace", "io_uring_setup")
# Calls that name a signal the KERNEL sends later, on the process's behalf, whether or not any process of the runner
# runs then: a stopped runner would be continued by its own earlier request for a SIGCONT (the filter above only
# sees the calls that send one now). A reviewer's attack (submissions/ch01_softmax/
# attack_background_sigcont.py) had a POSIX timer send SIGCONT every few ms to a child with a SIGCONT handler:
# the child ran on (state R) while the judge believed it stopped. So:
#   timer_create, mq_notify: only with no sigevent (NULL: the default SIGALRM; a non-NULL one is a pointer the
#       filter cannot read, so it is refused). glibc's timer_create always passes one (it fills in SIGALRM for
#       NULL): POSIX timers are refused altogether, and no library of the venv imports timer_create or mq_notify
#       (nm -D, checked when this was written); setitimer/alarm, sleeps and timeouts are other calls;
#   fcntl(F_SETSIG, SIGCONT): the signal of O_ASYNC I/O, leases and dnotify, raised by the judge's or another
#       runner's I/O;  prctl(PR_SET_PDEATHSIG, SIGCONT);  clone with SIGCONT as the exit signal (the low byte
#       of its flags) sent to the parent when a child dies (a stopped child still dies of SIGKILL or SIGALRM);
#   clone3: its exit signal is in a struct the filter cannot read: ENOSYS, so that glibc falls back to clone
#       (as it does under Docker's default profile).
_F_SETSIG, _PR_SET_PDEATHSIG, _ENOSYS = 10, 1, 38
_CONFINE = "FLASHCOURSE_CONFINE"  # =0: runners may leave their process group (the judge then looks for them)


def _group_filter(arch: dict) -> list[tuple[int, int, int, int]]:
    """The seccomp program (classic BPF, instructions (code, jt, jf, k)): wrong ABI -> kill the process; setsid,
    setpgid, ptrace, io_uring_setup -> EPERM; a call that sends SIGCONT, or has the kernel send it later (see
    _F_SETSIG) -> EPERM; clone3 -> ENOSYS; everything else allowed.
    The signal is compared on the argument's low 32 bits, which is what the kernel takes (an int), whatever the
    high ones hold (little-endian: the low word of args[i] is at offset 16 + 8 i of seccomp_data)."""
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
    allow, refuse, kill = 0x7FFF0000, 0x00050000 | 1, 0x80000000  # ALLOW, ERRNO(EPERM), KILL_PROCESS
    code: list = [("ins", ld, 4), ("jeq", arch["audit"], None, "KILL"), ("ins", ld, 0)]
    if arch["audit"] == 0xC000003E:
        code.append(("jge", 0x40000000, "KILL", None))
    cont = int(signal.SIGCONT)
    code += [("jeq", arch[name], "REFUSE", None) for name in _REFUSED]
    code += [("jeq", arch[name], f"SIG_{name}", None) for name in _SIGNAL_ARG]
    code += [("jeq", arch[name], f"NULL_{name}", None) for name in ("timer_create", "mq_notify")]
    code += [("jeq", arch["fcntl"], "FCNTL", None), ("jeq", arch["prctl"], "PRCTL", None),
             ("jeq", arch["clone"], "CLONE", None), ("jeq", arch["clone3"], "NOSYS", None)]
    code.append(("ret", allow))
    for name, i in _SIGNAL_ARG.items():
        code += [("label", f"SIG_{name}"), ("ins", ld, 16 + 8 * i), ("jeq", cont, "REFUSE", None),
                 ("ret", allow)]
    for name in ("timer_create", "mq_notify"):  # args[1], the sigevent pointer: both words 0, or refused
        code += [("label", f"NULL_{name}"), ("ins", ld, 24), ("jeq", 0, None, "REFUSE"), ("ins", ld, 28),
                 ("jeq", 0, None, "REFUSE"), ("ret", allow)]
    code += [("label", "FCNTL"), ("ins", ld, 24), ("jeq", _F_SETSIG, None, "ALLOW"), ("ins", ld, 32),
             ("jeq", cont, "REFUSE", "ALLOW"),
             ("label", "PRCTL"), ("ins", ld, 16), ("jeq", _PR_SET_PDEATHSIG, None, "ALLOW"), ("ins", ld, 24),
             ("jeq", cont, "REFUSE", "ALLOW"),
             ("label", "CLONE"), ("ins", ld, 16), ("and", 0xFF), ("jeq", cont, "REFUSE", "ALLOW"),
             ("label", "NOSYS"), ("ret", 0x00050000 | _ENOSYS), ("label", "ALLOW"), ("ret", allow)]
    code += [("label", "REFUSE"), ("ret", refuse), ("label", "KILL"), ("ret", kill)]
    at, n = {}, 0
    for c in code:  # label -> instruction index
        if c[0] == "label":
            at[c[1]] = n
        else:
            n += 1
    prog, n = [], 0
    for c in code:
        if c[0] == "label":
            continue
        if c[0] == "ins":
            prog.append((c[1], 0, 0, c[2]))
        elif c[0] == "ret":
            prog.append((ret, 0, 0, c[1]))
        elif c[0] == "and":
            prog.append((0x54, 0, 0, c[1]))  # BPF_ALU|BPF_AND|BPF_K: A &= k
        else:  # a jump: offsets count from the next instruction; None = fall through
            off = [0 if t is None else at[t] - (n + 1) for t in c[2:4]]
            assert all(0 <= o < 256 for o in off), (c, off)
            prog.append((jeq if c[0] == "jeq" else jge, off[0], off[1], c[1]))
        n += 1
    return prog


def confine_to_group() -> tuple[bool, str]:
    """From here on, this process and every process it starts can neither leave its process group nor start a
    new session (setsid() and setpgid() fail with EPERM), nor continue a stopped process (a signal call that
    sends SIGCONT fails with EPERM: else a process not yet stopped by the judge's killpg could continue the ones
    already stopped), nor trace one (ptrace) or queue work that runs while it is stopped (io_uring): a seccomp
    filter, inherited by every child and thread and never removed; it needs no capability, only no_new_privs,
    which is set here too. The judge then stops and continues every process of a runner with one killpg each
    (autograder.judge.session: a runner runs only while its judge waits for its answer). Calls of another
    architecture's ABI (32-bit) kill the process. (done, why not)."""
    import ctypes
    import platform
    if os.environ.get(_CONFINE) == "0":
        return False, f"switched off ({_CONFINE}=0)"
    arch = _SYSCALLS.get(platform.machine())
    if sys.platform != "linux" or arch is None or sys.byteorder != "little":
        return False, f"no seccomp filter written for {sys.platform} {platform.machine()}"
    prog = _group_filter(arch)

    class Insn(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Insn))]

    insns = (Insn * len(prog))(*[Insn(*i) for i in prog])
    fprog = Prog(len(prog), insns)
    try:
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        libc = _libc()
        libc.syscall.restype = ctypes.c_long
        # SECCOMP_SET_MODE_FILTER with SECCOMP_FILTER_FLAG_TSYNC: every thread of this process, not this one only
        rc = libc.syscall(ctypes.c_long(arch["seccomp"]), ctypes.c_ulong(1), ctypes.c_ulong(1), ctypes.byref(fprog))
        if rc != 0:
            err = ctypes.get_errno()
            return False, f"seccomp: {os.strerror(err) if rc < 0 else f'thread {rc} could not take the filter'}"
    except (OSError, AttributeError) as e:
        return False, f"seccomp: {e}"
    return True, "setsid, setpgid, SIGCONT (sent or scheduled), ptrace and io_uring refused (seccomp)"


def main(argv: list[str]) -> int:
    hide, copy, home, packages, memory = [], [], None, [], [0]
    i = 0
    while i < len(argv) and argv[i] != "--":
        flag, value = argv[i], argv[i + 1]
        {"--hide": hide.append, "--copy": copy.append, "--package": packages.append,
         "--memory": lambda v: memory.__setitem__(0, int(v))}.get(flag, lambda v: None)(value)
        if flag == "--home":
            home = value
        i += 2
    cmd = argv[i + 1:]
    if not cmd or home is None:
        print("usage: python -m autograder.boundary.sandbox --home DIR [--hide PATH ...] -- COMMAND ...",
              file=sys.stderr)
        return 2
    os.makedirs(home, exist_ok=True)
    for name in copy:  # files the command needs from a place that is hidden or read-only
        dst = os.path.join(home, os.path.basename(name))
        shutil.copy(name, dst)
        cmd = [dst if a == name else a for a in cmd]
    uid = enclose(home, hide, tuple(packages), memory[0])
    env = dict(os.environ, **environment(home))
    drop = ["setpriv", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all"]
    if uid:
        drop += [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    else:
        print(f"sandbox: runner keeps uid 0 (no capabilities): {UID_WHY[0] if UID_WHY else '?'}", file=sys.stderr)
    drop += ["--"]
    os.execvpe(drop[0], drop + cmd, env)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
