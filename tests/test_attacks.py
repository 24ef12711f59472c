"""Attacks on the grader that need more than a patched notebook cell to show (the cell-level ones are
known-wrong submissions, submissions/CH/attack_*.py, graded end to end by validate).

Each must cost exactly the attacker's own exercise and leave the judge, the course directory and
other exercises untouched."""
import os
import subprocess
import textwrap
import time

import numpy as np
import pytest

from autograder.judge import session as runner
from autograder.boundary import sandbox
from autograder.judge.session import ROOT
from autograder.judge.session import Session
from autograder.declare.submission import Cell

GOOD = Cell("python", textwrap.dedent("""
    def safe_softmax(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
"""), "safe_softmax")
SANDBOXED = sandbox.status()[0]
needs_sandbox = pytest.mark.skipif(not SANDBOXED, reason=f"no sandbox here: {sandbox.status()[1]}")


def _cell(src: str, origin: str) -> Cell:
    return Cell("python", textwrap.dedent(src), origin)


# defines an exercise's entry, then never finishes loading
HANG = _cell("""
    def softmax_triton(x, y):
        pass
    while True:
        pass
""", "softmax_triton")


def test_a_top_level_hang_costs_only_its_own_cell(monkeypatch):
    monkeypatch.setitem(runner.CELL_TIMEOUT, "cpu", 6.0)
    monkeypatch.setitem(runner.CELL_TIMEOUT, "gpu", 6.0)
    hang = HANG
    t0 = time.monotonic()
    with Session([hang, GOOD]) as s:
        bad = s.check("ch01.softmax_triton", "correctness")
        good = s.check("ch01.safe_softmax", "correctness")
    assert not bad.passed and "stopped the grader" in bad.message and "did not finish" in bad.message
    assert good.passed, good.message
    assert time.monotonic() - t0 < 60


def test_a_top_level_hang_costs_nothing_of_an_earlier_cell(monkeypatch):
    """The hang comes after an exercise's cell: that exercise passes, before and after the hang is met."""
    monkeypatch.setitem(runner.CELL_TIMEOUT, "cpu", 4.0)
    monkeypatch.setitem(runner.CELL_TIMEOUT, "gpu", 4.0)
    with Session([GOOD, HANG]) as s:
        before = s.check("ch01.safe_softmax", "correctness")
        bad = s.check("ch01.softmax_triton", "correctness")
        after = s.check("ch01.safe_softmax", "hidden")
    assert before.passed and after.passed, (before.message, after.message)
    assert not bad.passed and "stopped the grader" in bad.message


def test_exit_in_a_cell_costs_only_that_cell():
    exits = _cell("""
        import os
        def softmax_triton(x, y):
            pass
        os._exit(3)
    """, "softmax_triton")
    with Session([exits, GOOD]) as s:
        bad = s.check("ch01.softmax_triton", "correctness")
        good = s.check("ch01.safe_softmax", "hidden")
    assert not bad.passed and "exit code 3" in bad.message
    assert good.passed, good.message


def test_a_crash_during_a_check_leaves_the_next_check_a_fresh_runner():
    crash_once = _cell("""
        import os
        def safe_softmax(x):
            if x.shape == (4, 10):
                os.abort()
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
    """, "safe_softmax")
    with Session([crash_once]) as s:
        first = s.check("ch01.safe_softmax", "correctness")
        second = s.check("ch01.safe_softmax", "hidden")
    assert not first.passed and "died" in first.message
    assert second.passed, second.message


@needs_sandbox
def test_runner_cannot_write_the_course_or_see_solutions():
    probe = _cell(f"""
        import os
        def safe_softmax(x):
            found = []
            for p in ({os.path.join(ROOT, 'autograder', 'judge', 'grading.py')!r}, {os.path.join(ROOT, 'README.md')!r}):
                try:
                    open(p, "a").close()
                    found.append("wrote " + p)
                except OSError:
                    pass
            for p in ({os.path.join(ROOT, 'kernels_ref', 'ch01_softmax')!r}, {os.path.join(ROOT, 'source')!r}):
                if os.path.isdir(p) and os.listdir(p):
                    found.append("saw " + p)
            try:
                import kernels_ref.ch01_softmax.softmax_triton  # noqa
                found.append("imported kernels_ref")
            except ImportError:
                pass
            import autograder.declare.exercises.ch01_softmax as grader
            if hasattr(grader, "reference") or hasattr(grader, "verify"):
                found.append("the judge's reference or check is callable")
            if found:
                raise RuntimeError("; ".join(found))
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
    """, "safe_softmax")
    r = runner.run_check("ch01.safe_softmax", "correctness", [probe])
    assert r.passed, r.message


@needs_sandbox
def test_a_detached_process_does_not_survive_grading(tmp_path):
    marker = f"flashcourse-daemon-{os.getpid()}-{time.time_ns()}"
    daemon = _cell(f"""
        import os, subprocess, sys
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)  # {marker}"],
                         start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(30)  # {marker}"])
            os._exit(0)
    """, "daemon")
    r = runner.run_check("ch01.safe_softmax", "correctness", [daemon, GOOD])
    assert r.passed, r.message
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert left == [], f"processes started by the submission survived: {left}"


def test_a_submission_never_sees_the_judges_seed():
    spy = _cell("""
        import os, sys
        def safe_softmax(x):
            print("ENV", " ".join(f"{k}={v}" for k, v in os.environ.items()), "ARGV", sys.argv)
            for name in os.listdir("."):
                print("FILE", name, open(name, "rb").read()[:200] if name.endswith(".bin") else "")
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
    """, "safe_softmax")
    seed = 1234567891
    with Session([spy]) as s:
        r = s.check("ch01.safe_softmax", "correctness", seed=seed)
        log = s.proc.tail(10000)
    assert r.passed, r.message
    assert "ENV" in log and "FILE" in log  # the spy ran and reported what it could see
    assert str(seed) not in log and "1234567891" not in log


def test_hanging_cells_share_one_loading_budget_per_notebook(monkeypatch):
    monkeypatch.setitem(runner.CELL_TIMEOUT, "cpu", 3.0)
    monkeypatch.setitem(runner.CELL_TIMEOUT, "gpu", 3.0)
    monkeypatch.setitem(runner.LOAD_BUDGET, "cpu", 5.0)
    monkeypatch.setitem(runner.LOAD_BUDGET, "gpu", 5.0)
    hangs = [_cell(f"""
        def helper_{i}():
            pass
        while True:
            pass
    """, f"hang{i}") for i in range(4)]
    later = _cell("""
        def softmax_triton(x, y):
            pass
    """, "softmax_triton")
    t0 = time.monotonic()
    with Session([GOOD, *hangs, later]) as s:
        good = s.check("ch01.safe_softmax", "correctness")
        skipped = s.check("ch01.softmax_triton", "correctness")
    assert good.passed, good.message
    assert not skipped.passed and "loading budget" in skipped.message, skipped.message
    assert time.monotonic() - t0 < 45  # two hangs of 3 s (budget 5 s), not four, not ten minutes


@needs_sandbox
def test_runner_file_systems_are_read_only_but_its_home():
    probe = _cell("""
        import os
        def safe_softmax(x):
            wrote = []
            with open("/dev/shm/fc_attack_probe", "w"):  # a private /dev/shm: gone with the runner
                pass
            for p in ("/proc/sys/kernel/hostname", "/var/tmp/fc_attack_probe", "/sys/bus/pci/rescan"):
                try:
                    with open(p, "a"):
                        wrote.append(p)
                except OSError:
                    pass
            try:
                os.rename(os.getcwd(), os.getcwd() + "-moved")
                wrote.append("renamed HOME")
            except OSError:
                pass
            with open("scratch.txt", "w") as f:  # its own HOME is writable
                f.write("ok")
            if wrote:
                raise RuntimeError("wrote " + ", ".join(wrote))
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
    """, "safe_softmax")
    r = runner.run_check("ch01.safe_softmax", "correctness", [probe])
    assert r.passed, r.message
    assert not os.path.exists("/dev/shm/fc_attack_probe")  # the judge's /dev/shm never saw it


def test_the_judges_environment_stays_out_of_the_runner(monkeypatch):
    monkeypatch.setenv("INSTRUCTOR_API_TOKEN", "s3cr3t-token")
    spy = _cell("""
        import os
        def safe_softmax(x):
            if "INSTRUCTOR_API_TOKEN" in os.environ:
                raise RuntimeError("saw " + os.environ["INSTRUCTOR_API_TOKEN"])
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
    """, "safe_softmax")
    r = runner.run_check("ch01.safe_softmax", "correctness", [spy])
    assert r.passed, r.message


def test_an_output_the_wire_cannot_carry_fails_only_its_check():
    odd = _cell("""
        def safe_softmax(x):
            e = np.exp(x - x.max(-1, keepdims=True))
            return (e / e.sum(-1, keepdims=True)).astype(np.longdouble)
    """, "safe_softmax")
    r = runner.run_check("ch01.safe_softmax", "correctness", [odd])
    assert not r.passed and "cannot be graded" in r.message, r.message


def test_a_replaced_output_factory_cannot_switch_the_guards_off():
    from autograder.instructor.bench_grading import _cells
    solution = next(c for c in _cells(os.path.join(ROOT, "source/ch01_softmax/ch01_softmax.ipynb"))
                    if c.origin == "softmax_triton")
    cheat = Cell("python", "import autograder.runner.execute as _ex\n"
                 "_ex.Outputs.tensor = lambda self, shape, dtype: torch.empty(shape, dtype=dtype)\n"
                 + solution.source, "softmax_triton")
    r = runner.run_check("ch01.softmax_triton", "correctness", [cheat])
    assert not r.passed and "replaced" in r.message and "Outputs.tensor" in r.message, r.message


def test_wire_never_follows_links_or_reads_fifos(tmp_path):
    import pytest as _pytest

    from autograder.boundary import wire
    os.mkfifo(tmp_path / "f.bin")
    os.symlink("/etc/hostname", tmp_path / "l.bin")
    t0 = time.monotonic()
    for name in ("f.bin", "l.bin"):
        with _pytest.raises(wire.WireError):
            wire.decode({"buf": name, "lib": "numpy", "dtype": "uint8", "shape": [0]}, str(tmp_path))
    assert time.monotonic() - t0 < 5
    with _pytest.raises(OSError):  # a planted file or link is never written through
        wire.encode(np.zeros(3, dtype=np.float32), str(tmp_path), "l")  # l0.bin is new: fine
        wire.encode(np.zeros(3, dtype=np.float32), str(tmp_path), "l")  # l0.bin exists now: refused
    with _pytest.raises(wire.WireError, match="named twice"):
        wire.decode({"list": [{"buf": "l0.bin", "lib": "numpy", "dtype": "float32", "shape": [3]}] * 2},
                    str(tmp_path))


def test_the_judge_maps_nothing_a_runner_names_and_reads_its_arena_only_where_it_lent_it(tmp_path):
    """GPU buffers cross by CUDA IPC from the judge to a runner only (autograder.boundary.gpushare): an answer that
    names a lent buffer (a handle) is refused, and an output placed in the lent arena is read from inside it,
    aligned, never twice over the same bytes, and copied out at once (the runner may write there later)."""
    import pytest as _pytest
    import torch

    from autograder.boundary import wire
    with _pytest.raises(wire.WireError, match="unknown entry"):  # a handle in an answer: never opened
        wire.decode({"lent": "00" * 64, "size": 1 << 21, "lib": "torch", "dtype": "float32", "shape": [4]},
                    str(tmp_path), arena=(torch.zeros(1024, dtype=torch.uint8), []))
    arena = torch.arange(1024, dtype=torch.int32).view(torch.uint8)  # 4096 bytes
    spans: list = []
    got = wire.decode({"arena": 256, "dtype": "int32", "shape": [4]}, str(tmp_path), arena=(arena, spans))
    assert got.tolist() == [64, 65, 66, 67]
    arena.view(torch.int32)[64] = -1  # written after the answer: the judge's copy does not change
    assert got.tolist() == [64, 65, 66, 67]
    for bad, why in ((260, "bad place"), (4096 - 8, "bad place"), (-16, "bad place"), (240, "overlap")):
        with _pytest.raises(wire.WireError, match=why):
            wire.decode({"arena": bad, "dtype": "int32", "shape": [8]}, str(tmp_path), arena=(arena, spans))
    with _pytest.raises(wire.WireError, match="not allowed"):
        wire.decode({"arena": 1024, "dtype": "complex64", "shape": [1]}, str(tmp_path), arena=(arena, []))
    for shape in ([0], [2**32, 2**32]):  # empty (thousands of those would cost the judge time), or wrapping around
        with _pytest.raises(wire.WireError, match="bad place"):
            wire.decode({"arena": 1024, "dtype": "int32", "shape": shape}, str(tmp_path), arena=(arena, []))


@needs_sandbox
def test_runner_is_user_nobody_and_cannot_read_the_instructors_private_files(tmp_path):
    secret = tmp_path / "instructor_token.txt"  # under pytest's 0700 directory of root, itself 0600
    secret.write_text("s3cr3t")
    secret.chmod(0o600)
    ns = {k: os.readlink(f"/proc/self/ns/{k}") for k in ("uts", "ipc", "net", "mnt", "pid")}
    probe = _cell(f"""
        import os
        def safe_softmax(x):
            bad = []
            if os.getuid() != {sandbox.RUNNER_UID} or os.getgid() != {sandbox.RUNNER_UID} or os.getgroups():
                bad.append(f"uid {{os.getuid()}} gid {{os.getgid()}} groups {{os.getgroups()}}")
            for p in ({str(secret)!r}, "/etc/shadow", "/root/.bash_history", "/root/.ssh"):
                try:
                    with open(p) as f:
                        bad.append("read " + p + ": " + f.read(20))
                except OSError:
                    pass
            try:  # not readable at all, or only the paths Python needs were bound back
                seen = set(os.listdir("/root")) - {{".pyenv", ".cache", ".local"}}
            except PermissionError:
                seen = set()
            if seen:
                bad.append("saw /root: " + ",".join(sorted(seen)[:5]))
            for k, v in {ns!r}.items():
                if os.readlink("/proc/self/ns/" + k) == v:
                    bad.append("shares the judge's " + k + " namespace")
            if bad:
                raise RuntimeError("; ".join(bad))
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
    """, "safe_softmax")
    r = runner.run_check("ch01.safe_softmax", "correctness", [probe])
    assert r.passed, r.message


def test_an_answer_larger_than_the_inputs_warrant_is_refused_unread():
    flood = _cell("""
        def safe_softmax(x):
            return np.zeros((300 << 20) // 8)  # 300 MiB for an input of a few KiB: the judge must not read it
    """, "safe_softmax")
    with Session([flood]) as s:
        r = s.check("ch01.safe_softmax", "correctness")
        assert not r.passed and "more than this answer may carry" in r.message, r.message
        r = s.check("ch01.safe_softmax", "correctness")  # and the session goes on
        assert not r.passed


def test_scratch_of_a_killed_judge_is_swept(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that no longer runs
    stale = tmp_path / f"flashcourse-run-{dead.pid}-abc123"
    (stale / "tmp").mkdir(parents=True)
    (stale / "i1_0.bin").write_bytes(b"x" * 1000)
    mine = tmp_path / f"flashcourse-run-{os.getpid()}-def456"
    mine.mkdir()
    other = tmp_path / "flashcourse-run-unrelated"
    other.mkdir()
    assert runner.sweep_scratch(str(tmp_path)) == 1
    assert not stale.exists() and mine.exists() and other.exists()


# ---- on a GPU: what a kernel can do to its own process, and timing tricks ----
import course  # noqa: E402

needs_gpu = pytest.mark.skipif(not course.GPU, reason="needs a GPU")
TRITON_HEAD = """
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def softmax_kernel(x_ptr, y_ptr, n_cols, xs, ys, BLOCK: tl.constexpr, WILD: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * xs + cols, mask=mask, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(y_ptr + row * ys + cols + WILD, e / tl.sum(e, axis=0), mask=mask)

    def launch(x, y, wild=0):
        rows, cols = x.shape
        softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(cols),
                                WILD=wild, num_warps=8)
"""


def _triton(body: str) -> Cell:
    return Cell("python", textwrap.dedent(TRITON_HEAD) + textwrap.dedent(body), "softmax_triton")


@needs_gpu
def test_gpu_illegal_address_costs_its_check_and_the_next_check_gets_a_fresh_runner():
    wild = _triton("""
        def softmax_triton(x, y):
            launch(x, y, wild=1 << 40)  # far outside any allocation: the CUDA context is lost
    """)
    with Session([GOOD, wild]) as s:
        r = s.check("ch01.softmax_triton", "correctness")
        assert not r.passed and "illegal" in r.message.lower(), r.message
        r = s.check("ch01.safe_softmax", "correctness")
        assert r.passed, r.message


@needs_gpu
def test_gpu_out_of_memory_costs_only_its_check():
    hog = _triton("""
        def softmax_triton(x, y):
            torch.empty(1 << 46, dtype=torch.uint8, device=x.device)  # 64 TiB
            launch(x, y)
    """)
    with Session([GOOD, hog]) as s:
        r = s.check("ch01.softmax_triton", "correctness")
        assert not r.passed and "memory" in r.message.lower(), r.message
        assert s.check("ch01.safe_softmax", "correctness").passed


@needs_gpu
@pytest.mark.parametrize("how", ["side stream", "background thread"])
def test_gpu_work_outside_the_timed_stream_does_not_buy_bandwidth(how):
    """The work runs on another stream (or from a thread) once, while the judge's round is captured or timed,
    and the wrapper returns at once: the outputs are right, the timed rounds do nothing."""
    body = {"side stream": """
        side = torch.cuda.Stream()
        def softmax_triton(x, y):
            with torch.cuda.stream(side):
                launch(x, y)
    """, "background thread": """
        import threading
        def softmax_triton(x, y):
            t = threading.Thread(target=launch, args=(x, y))
            t.start()
    """}[how]
    with Session([GOOD, _triton(body)]) as s:
        r = s.check("ch01.softmax_triton", "bandwidth")
        assert not r.passed, r.message


def test_a_sticky_cuda_error_retires_the_runner():
    """Such an error poisons the process's CUDA context (on a GPU: every later call fails with it), so the judge
    starts the next check in a fresh runner; here the error is only raised, which is enough to see that."""
    sticky = _cell("""
        def softmax_triton(x, y):
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
    """, "softmax_triton")
    with Session([GOOD, sticky]) as s:
        r = s.check("ch01.softmax_triton", "correctness")
        assert not r.passed and "fresh one" in r.message, r.message
        assert s.proc is None
        assert s.check("ch01.safe_softmax", "correctness").passed


# ---- what counts as the student's own kernel (issue 18) ----
NUMPY_SOFTMAX = """
    import numpy as _np
    import torch as _torch
    def _numpy_softmax(x):
        a = x.detach().cpu().numpy()
        e = _np.exp(a - a.max(-1, keepdims=True))
        return _torch.from_numpy(e / e.sum(-1, keepdims=True)).to(x.device)
"""


def test_a_triton_exercise_done_in_plain_python_fails():
    cheat = _cell(NUMPY_SOFTMAX + """
    def softmax_triton(x, y):
        y.copy_(_numpy_softmax(x))  # no kernel at all: NumPy, then an allowed copy
    """, "softmax_triton")
    r = runner.run_check("ch01.softmax_triton", "correctness", [GOOD, cheat])
    assert not r.passed and "no Triton kernel of yours was launched" in r.message, r.message


def test_a_cuda_exercise_must_be_a_kernel_from_cuda_source():
    impostor = _cell(NUMPY_SOFTMAX + """
    def softmax_3pass(grid, block, args, shared_mem=0):  # the launch contract, in Python
        x, y = args[0], args[1]
        y.copy_(_numpy_softmax(x))
    """, "softmax_cuda")
    r = runner.run_check("ch01.softmax_cuda", "correctness", [GOOD, impostor])
    assert not r.passed and "must be a CUDA kernel from a %%cuda cell" in r.message, r.message


def test_behaving_well_only_when_called_again_gains_nothing():
    """The audit watches the graded call itself: a wrapper that falls back to NumPy on its first call of each
    input (the one graded) and launches its kernel only when called again is caught."""
    two_faced = _cell(NUMPY_SOFTMAX + TRITON_HEAD.replace("    import torch\n", "") + """
    _seen = set()
    def softmax_triton(x, y):
        if id(x) not in _seen:
            _seen.add(id(x))
            y.copy_(_numpy_softmax(x))
        else:
            launch(x, y)
    """, "softmax_triton")
    r = runner.run_check("ch01.softmax_triton", "correctness", [GOOD, two_faced])
    assert not r.passed and "no Triton kernel of yours was launched" in r.message, r.message


@needs_gpu
def test_gpu_buffers_are_lent_by_cuda_ipc_and_an_address_cache_gains_nothing():
    """On a GPU the judge lends its own buffers (autograder.boundary.gpushare): inputs and the output arena cross by
    CUDA IPC, not through files. A lent buffer is reused for the next case of the same size, so a kernel that
    keys a cache on input addresses hands back the previous case's answer and fails."""
    good = _triton("""
        def softmax_triton(x, y):
            launch(x, y)
    """)
    cache = _triton("""
        @triton.jit
        def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
            i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(dst + i, tl.load(src + i, mask=i < n), mask=i < n)

        seen = {}
        def softmax_triton(x, y):  # only its own kernels run: the audit has nothing to say
            key = (x.data_ptr(), tuple(x.shape))
            if key not in seen:
                seen[key] = torch.empty_like(y)
                launch(x, seen[key])
            copy_kernel[(triton.cdiv(y.numel(), 1024),)](seen[key], y, y.numel(), BLOCK=1024)
    """)
    with Session([GOOD, good]) as s:
        for check in ("correctness", "hidden"):
            r = s.check("ch01.softmax_triton", check)
            assert r.passed, r.message
        assert not s.no_lending and runner._Lending.broken is None, runner._Lending.broken
        assert not [f for f in os.listdir(s.proc.dir) if f.endswith(".bin")]  # nothing went through files
    with Session([GOOD, cache]) as s:  # the same shapes again, with new inputs: a cache hit is a wrong answer
        assert s.check("ch01.softmax_triton", "correctness").passed
        r = s.check("ch01.softmax_triton", "correctness")
        assert not r.passed, r.message


# Answering the judge for the worker (submissions/ch01_softmax/attack_forged_reply.py): the wrapper has no
# kernel (the audit's finding) and writes its own answer, audit clean, into the worker's reply channel.
FORGE = """
    import os, sys
    _CHANNEL = []

    def _forge(y, take):
        from autograder.boundary import wire
        from autograder.runner import worker
        seen, f = {}, sys._getframe()
        while f is not None:  # the worker's variables: its reply fd, the request, its outputs
            for k in ("reply_fd", "req", "directory", "outs"):
                if k in f.f_locals and k not in seen:
                    seen[k] = f.f_locals[k]
            f = f.f_back
        if not _CHANNEL:
            if take:  # a copy for itself, /dev/null for the worker (whose answers carry the finding)
                _CHANNEL.append(os.dup(seen["reply_fd"]))
                os.dup2(os.open(os.devnull, os.O_WRONLY), seen["reply_fd"])
            else:  # the worker's own descriptor: its answer follows the forged one
                _CHANNEL.append(seen["reply_fd"])
        tag, made = f"r{seen['req'].get('n', 0)}_f", seen["outs"].made
        guards = [{"buf": wire.encode(b, seen["directory"], f"{tag}g{i}_"), "n": n, "canary": c}
                  for i, (b, n, c) in enumerate(made)]
        out = wire.encode(y, seen["directory"], tag + "o", known=worker._middle_of(made))
        wire.send(_CHANNEL[0], {"ok": True, "audit": None, "guards": guards, "out": out, **EXTRA,
                                "n": seen["req"].get("n")})  # the request it answers, as the worker's

    def softmax_triton(x, y):
        y.copy_(_numpy_softmax(x))
        _forge(y, TAKE)
"""


@pytest.mark.parametrize("take", [True, False])
def test_a_forged_answer_in_the_reply_channel_fails_its_check(monkeypatch, take):
    forger = _cell(NUMPY_SOFTMAX + FORGE.replace("TAKE", str(take)).replace(" **EXTRA,", ""), "softmax_triton")
    with Session([GOOD, forger]) as s:
        first = s.check("ch01.softmax_triton", "correctness")
        again = s.check("ch01.softmax_triton", "hidden")
        good = s.check("ch01.safe_softmax", "correctness")
    assert not first.passed and not again.passed, (first.message, again.message)
    said = "took the grader's reply channel" if take else "an answer nobody asked for"
    assert said in first.message or said in again.message, (first.message, again.message)
    assert good.passed, good.message  # the other exercises of the notebook keep their points
    if take:  # what the check prevents: without it, the forged answers passed (the audit's finding never came)
        monkeypatch.setattr(runner._Process, "check_channel", lambda self: None)
        with Session([GOOD, forger]) as s:
            cheat = s.check("ch01.softmax_triton", "correctness")
        assert cheat.passed, cheat.message


def test_a_forged_ok_answer_marked_fatal_is_still_channel_checked():
    """A fatal answer (a worker whose CUDA context is lost answers, then exits) is not channel-checked: its
    descriptors may be gone. A forger who marks its ok answer "fatal" to skip the check must gain nothing: only an
    answer that is not ok may skip it (an earlier version of the check took such an answer)."""
    forger = _cell(NUMPY_SOFTMAX + FORGE.replace("TAKE", "True").replace("**EXTRA", '**{"fatal": True}'),
                   "softmax_triton")
    with Session([GOOD, forger]) as s:
        first = s.check("ch01.softmax_triton", "correctness")
        good = s.check("ch01.safe_softmax", "correctness")
    assert not first.passed, first.message
    assert "took the grader's reply channel" in first.message, first.message
    assert good.passed, good.message


def test_the_tamper_check_sees_swapped_code_and_shadowed_methods():
    """What keeps a name but changes what is behind it: a function's code object, defaults or closure cells swapped
    in place, a method of CUDA's Event or CUDAGraph replaced, or shadowed by one added to a subclass. All are put back
    and named; data that torch.cuda changes as it works (not callables) is not tampering."""
    import torch

    from autograder.runner import tamper
    from autograder.runner.tamper import Snapshot
    from course import timing
    snap = Snapshot()
    code, kwdefaults = timing.bench.__code__, timing.bench.__kwdefaults__
    sweep_defaults = timing.row_sweep.__defaults__
    assert kwdefaults and sweep_defaults  # what the swaps below replace
    elapsed = torch.cuda.Event.__dict__["elapsed_time"]
    capture_begin = vars(torch.cuda.CUDAGraph)["capture_begin"]
    initialized = torch.cuda._initialized
    try:
        timing.bench.__code__ = (lambda fn, *a, **k: 1e-6).__code__
        timing.bench.__kwdefaults__ = {k: 1 for k in kwdefaults}
        timing.row_sweep.__defaults__ = (1,) * len(sweep_defaults)
        torch.cuda.Event.elapsed_time = lambda self, end: 1e-6
        torch.cuda.CUDAGraph.capture_begin = lambda self, *a, **k: None
        torch.cuda._initialized = not initialized  # data: torch.cuda's own business
        changed = snap.restore()
        assert timing.bench.__code__ is code and timing.bench.__kwdefaults__ is kwdefaults
        assert timing.row_sweep.__defaults__ is sweep_defaults
        assert torch.cuda.Event.__dict__["elapsed_time"] is elapsed
        assert vars(torch.cuda.CUDAGraph)["capture_begin"] is snap.classes[torch.cuda.CUDAGraph]["capture_begin"]
        assert "course.timing.bench (its code)" in changed and "Event.elapsed_time" in changed, changed
        assert "course.timing.row_sweep (its code)" in changed, changed
        assert "CUDAGraph.capture_begin" in changed, changed
        assert not any("_initialized" in c for c in changed), changed
        assert snap.restore() == []  # all put back: nothing more to say
        timing.bench.__kwdefaults__["reps"] = 1  # the same dict, changed in place
        assert snap.restore() == ["course.timing.bench (its code)"] and timing.bench.__kwdefaults__ == dict(
            kwdefaults.items()) and timing.bench.__kwdefaults__["reps"] != 1

        class Base:  # (on a GPU build, torch._C's event and graph types are the bases of Event and CUDAGraph)
            def replay(self):
                return "real"

        class Graph(Base):
            pass
        snap.classes[Graph] = dict(vars(Graph))
        Graph.replay = lambda self: "forged"  # added to the subclass: it shadows the base's
        Graph.helper = lambda self: "new"  # shadows nothing: a submission's own business
        assert snap.restore() == ["Graph.replay"] and Graph().replay() == "real" and Graph().helper() == "new"

        def make(limit):
            def under(v):
                return v < limit
            return under
        under = make(0.74)  # a watched function with a closure (the Snapshot watches such ones of torch and numpy)
        snap.insides[id(under)] = ("under", under, tamper._insides(under))
        under.__closure__[0].cell_contents = 0.0  # the same function, the same code: another limit
        assert snap.restore() == ["under (its code)"] and under(0.5)
    finally:
        torch.cuda._initialized = initialized
        timing.bench.__code__, timing.bench.__kwdefaults__ = code, kwdefaults
        timing.row_sweep.__defaults__ = sweep_defaults
        torch.cuda.Event.elapsed_time = elapsed
        torch.cuda.CUDAGraph.capture_begin = capture_begin


def test_a_sealed_arena_tells_a_write_after_the_answer():
    """The judge seals the output arena once the runner has answered a timed batch; a write after that (a runner whose
    GPU was still running the batch) shows, and either way the outputs are put back for verification."""
    import torch
    block = torch.arange(4096, dtype=torch.int64).to(torch.uint8)
    before = block.clone()
    saved = runner.seal(block)
    assert bool((block == runner.SEAL).all())
    assert runner.unseal(block, saved) is False and torch.equal(block, before)
    saved = runner.seal(block)
    block[1000:1004] = 7  # the runner's kernel, still writing
    assert runner.unseal(block, saved) is True and torch.equal(block, before)


def test_a_seal_with_no_room_on_the_gpu_keeps_its_copy_in_host_memory(monkeypatch):
    import torch

    def no_room(self):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 420.00 MiB")
    block = torch.arange(4096, dtype=torch.int64).to(torch.uint8)
    before = block.clone()
    monkeypatch.setattr(torch.Tensor, "clone", no_room)
    saved = runner.seal(block)
    monkeypatch.undo()
    assert saved.device.type == "cpu" and saved.data_ptr() != block.data_ptr()
    block[7] = 0  # a late write
    assert runner.unseal(block, saved) is True and torch.equal(block, before)


def test_the_judge_unseals_the_arena_before_it_reads_the_outputs_out_of_it():
    """Why measure_bandwidth unseals before it collects: the collect's outputs are read out of the lent arena (the
    wire takes its own copy there), so read while sealed they would be the seal; read after, the outputs."""
    import types

    import torch

    from autograder.boundary import wire
    block = torch.zeros(1 << 16, dtype=torch.uint8)
    block[:16].view(torch.float32)[:] = 1.0  # an output of four ones at the start of the arena
    session = types.SimpleNamespace(proc=types.SimpleNamespace(arena=(block, [])), sealed=None)
    remote = runner._Remote(session, deadline=0.0)
    def read():
        return wire.decode({"arena": 0, "dtype": "float32", "shape": [4]}, "/nonexistent", "cpu", [1 << 20],
                           arena=(block, [])).tolist()
    assert remote.seal() is True and bool((block == runner.SEAL).all())
    assert read() != [1.0] * 4  # sealed: what a collect read now would verify
    assert remote.unseal() is False and remote.unseal() is None  # once: then nothing is sealed
    assert read() == [1.0] * 4


def test_the_timed_batch_replays_and_waits_with_what_was_bound_before_the_submission():
    """graphs.replay calls the wait and CUDAGraph.replay bound first (bind_primitives), on the graph itself: a
    `replay` attribute a submission gave the graph object, or a torch.cuda.synchronize it replaced later, is never
    called."""
    from autograder.boundary import graphs
    calls = []

    class Graph:
        pass
    graph = Graph()
    graph.replay = lambda: calls.append("forged replay")
    saved = graphs._PRIMITIVES
    graphs._PRIMITIVES = (lambda: calls.append("wait"), lambda g: calls.append(("replay", g)))
    try:
        graphs.replay(graph, [], 3)
        assert calls == ["wait"] + [("replay", graph)] * 3 + ["wait"], calls
    finally:
        graphs._PRIMITIVES = saved


@needs_gpu
def test_a_runner_answering_before_its_gpu_is_done_is_caught_by_the_seal():
    """Past the tamper check: plain launches (the wrapper refuses to be captured in a graph), and in the timed loop
    the wrapper finds the runner's replay frame and swaps its local `wait` for one that does not wait (ctypes), so
    the runner answers as soon as the batch is queued. The judge's seal over the output arena sees the batch's
    kernels still writing after the answer: the check fails, and says why."""
    cheat = _triton("""
        import ctypes
        import sys

        def _no_wait():
            return None

        def softmax_triton(x, y):
            if torch.cuda.is_current_stream_capturing():
                raise RuntimeError("plain launches, please")
            launch(x, y)
            f = sys._getframe(1)
            while f is not None and f.f_code.co_name != "replay":
                f = f.f_back
            if f is not None and f.f_locals.get("wait") is not _no_wait:
                f.f_locals["wait"] = _no_wait  # Python 3.13 and later: written through
                if hasattr(ctypes.pythonapi, "PyFrame_LocalsToFast"):  # 3.12 and earlier
                    ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(f), ctypes.c_int(0))
    """)
    with Session([GOOD, cheat]) as s:
        r = s.check("ch01.softmax_triton", "bandwidth")
        assert not r.passed and "still running" in r.message, r.message
        assert s.check("ch01.safe_softmax", "correctness").passed


def _ch01_attack(name: str) -> Cell:
    from autograder.instructor.bench_grading import _cells
    from autograder.instructor.submissions import for_chapter
    w = next(w for w in for_chapter("ch01_softmax") if w.name == name)
    solution = next(c for c in _cells(os.path.join(ROOT, "source/ch01_softmax/ch01_softmax.ipynb"))
                    if c.origin == w.cell)
    return Cell("python", w.apply(solution.source), w.cell)


def _fraction(message: str) -> float:
    import re
    m = re.search(r"= (\d+)% of the copy bandwidth", message)
    assert m, message
    return int(m.group(1)) / 100


@needs_gpu
def test_a_replaced_wait_in_the_capture_is_found_before_the_batch():
    """ch01 attack_unwaited_batch, graded: its bandwidth check fails because the runner's check after the capture
    names the replacement (not only because an early answer would be faster than the roofline allows)."""
    with Session([GOOD, _ch01_attack("attack_unwaited_batch")]) as s:
        r = s.check("ch01.softmax_triton", "bandwidth")
        assert not r.passed and "torch.cuda.synchronize" in r.message, r.message
        assert s.check("ch01.softmax_triton", "correctness").passed


@needs_gpu
def test_a_replay_attribute_on_the_graph_skips_no_rounds():
    """ch01 attack_skip_replays against the same one-warp kernel without it, in one session each, same GPU: the
    graph object's own `replay` (one replay in eight skipped) is never called, so both read the same bandwidth
    (a skip would read 8/7 of it: 14% more)."""
    plain = _ch01_attack("triton_one_warp")
    with Session([GOOD, plain]) as s:
        honest = _fraction(s.check("ch01.softmax_triton", "bandwidth").message)
    with Session([GOOD, _ch01_attack("attack_skip_replays")]) as s:
        r = s.check("ch01.softmax_triton", "bandwidth")
    assert "plain launches" not in r.message, r.message  # replayed as a graph: the attribute was there to call
    assert abs(_fraction(r.message) / honest - 1) < 0.05, (honest, r.message)
