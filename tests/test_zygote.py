"""The runner zygote (autograder/runner/zygote.py): runners forked from one process that imported everything once.

Each runner must still be a world of its own (no state from an earlier submission, no descriptor of the
zygote or of another runner, in the sandbox no capability at all), and whatever a runner does to itself
(exits, aborts, is killed mid-check) costs that runner alone: the zygote goes on forking the next ones."""
import os
import signal
import subprocess
import textwrap
import threading
import time

import pytest

from autograder.judge import session as runner
from autograder.boundary import sandbox
from autograder.judge.session import Session, _Forked, _Zygote
from autograder.declare.submission import Cell

GOOD = Cell("python", textwrap.dedent("""
    def safe_softmax(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
"""), "safe_softmax")
SANDBOXED = sandbox.status()[0]

pytestmark = pytest.mark.skipif(os.environ.get("FLASHCOURSE_ZYGOTE") == "0", reason="FLASHCOURSE_ZYGOTE=0")


def _cell(src: str, origin: str = "safe_softmax") -> Cell:
    return Cell("python", textwrap.dedent(src), origin)


def _zygote_pid() -> int:
    z = _Zygote.current
    assert z is not None and z.ready and z.proc.poll() is None, "no live zygote"
    return z.proc.pid


def test_a_session_through_the_zygote_grades_safe_softmax(monkeypatch):
    monkeypatch.setattr(runner, "NUMPY_RUNNERS", False)  # the torch runners' zygote (_Zygote.current) serves it
    with Session([GOOD]) as s:
        r = s.check("ch01.safe_softmax", "correctness")
        assert isinstance(s.proc.proc, _Forked), "the runner did not come from the zygote"
    assert r.passed, r.message
    if SANDBOXED:
        assert _Zygote.current.ready["sandbox"][0], _Zygote.current.ready


def test_runners_of_one_zygote_share_no_state(monkeypatch):
    """A module attribute, a global of the cells' namespace and a file in its directory set by one submission are not
    there for the next; a runner holds no descriptor but its own (no zygote socket, no other runner's pipe)."""
    leaky = _cell("""
        import collections, os
        FOUND = []
        if hasattr(collections, "flashcourse_leak"):
            FOUND.append("a module attribute of an earlier runner")
        if "leaked_global" in globals():
            FOUND.append("a global of an earlier runner")
        if os.path.exists("leak.txt"):
            FOUND.append("a file of an earlier runner")
        fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
        if len(fds) > 6:  # 0, 1, 2, the request and reply pipes, the listing's own descriptor
            FOUND.append(f"descriptors {fds}: " + ", ".join(os.readlink(f"/proc/self/fd/{fd}") for fd in fds
                                                           if os.path.exists(f"/proc/self/fd/{fd}")))
        collections.flashcourse_leak = os.getpid()
        leaked_global = 1
        open("leak.txt", "w").close()  # its working directory

        def safe_softmax(x):
            if FOUND:
                raise RuntimeError("; ".join(FOUND))
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
    """)
    monkeypatch.setattr(runner, "NUMPY_RUNNERS", False)  # the torch runners' zygote (_Zygote.current) serves it
    results, runners = [], []
    for _ in range(3):
        with Session([leaky]) as s:
            results.append(s.check("ch01.safe_softmax", "correctness"))
            runners.append((s.proc.proc.pid, _zygote_pid()))
    assert all(r.passed for r in results), [r.message for r in results]
    assert len({pid for pid, _ in runners}) == 3 and len({z for _, z in runners}) == 1, runners


@pytest.mark.skipif(not SANDBOXED, reason=f"no sandbox here: {sandbox.status()[1]}")
def test_a_sandboxed_runner_has_no_capabilities():
    probe = _cell("""
        import os
        from autograder.boundary import sandbox
        CAPS = sandbox.capabilities()
        PID = os.getpid()
        NNP = [ln.split()[1] for ln in open("/proc/self/status") if ln.startswith("NoNewPrivs")]

        def safe_softmax(x):
            bad = {k: hex(v) for k, v in CAPS.items() if v}
            if bad or PID != 1 or NNP != ["1"]:
                raise RuntimeError(f"capabilities {bad}, pid {PID}, NoNewPrivs {NNP}")
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
    """)
    with Session([probe]) as s:
        r = s.check("ch01.safe_softmax", "correctness")
        assert isinstance(s.proc.proc, _Forked)
    assert r.passed, r.message


def test_a_runner_killed_mid_check_is_replaced(monkeypatch):
    monkeypatch.setattr(runner, "NUMPY_RUNNERS", False)  # safe_softmax in the runner s._start() starts
    slow = _cell("""
        import os, time
        def safe_softmax(x):
            if x.shape == (4, 10):
                open("inside.txt", "w").close()  # HOME: the judge sees it, the check is under way
                time.sleep(60)
            e = np.exp(x - x.max(-1, keepdims=True))
            return e / e.sum(-1, keepdims=True)
    """)
    with Session([slow]) as s:
        s._start()
        first_pid, home = s.proc.proc.pid, s.proc.dir
        zygote = _zygote_pid()

        def killer():
            deadline = time.monotonic() + 60
            while not os.path.exists(os.path.join(home, "inside.txt")) and time.monotonic() < deadline:
                time.sleep(0.02)
            os.kill(first_pid, signal.SIGKILL)

        t = threading.Thread(target=killer)
        t.start()
        first = s.check("ch01.safe_softmax", "correctness")
        t.join()
        second = s.check("ch01.safe_softmax", "hidden")
        assert s.proc is not None and s.proc.proc.pid != first_pid
    assert not first.passed and "died (signal 9)" in first.message, first.message
    assert second.passed, second.message
    assert _zygote_pid() == zygote


def test_the_zygote_survives_exit_and_abort():
    exits = _cell("""
        import os
        def softmax_triton(x, y):
            pass
        os._exit(3)
    """, "softmax_triton")
    aborts = _cell("""
        import os
        def safe_softmax(x):
            os.abort()
    """)
    with Session([GOOD]) as s:
        s._start()
    zygote = _zygote_pid()
    with Session([exits, GOOD]) as s:
        bad = s.check("ch01.softmax_triton", "correctness")
        good = s.check("ch01.safe_softmax", "correctness")
    assert not bad.passed and "exit code 3" in bad.message, bad.message
    assert good.passed, good.message
    with Session([aborts]) as s:
        r = s.check("ch01.safe_softmax", "correctness")
    # PID 1 of a PID namespace (the sandboxed runner, by either path) ignores its own SIGABRT: abort() then
    # ends it with SIGSEGV, as `unshare --fork` + exec did before the zygote
    assert not r.passed and f"died (signal {11 if SANDBOXED else 6})" in r.message, r.message
    assert _zygote_pid() == zygote
    with Session([GOOD]) as s:
        assert s.check("ch01.safe_softmax", "correctness").passed
        assert isinstance(s.proc.proc, _Forked)
    assert _zygote_pid() == zygote


def test_a_dead_zygote_is_started_again(monkeypatch):
    monkeypatch.setattr(runner, "NUMPY_RUNNERS", False)  # the torch runners' zygote (_Zygote.current) serves it
    with Session([GOOD]) as s:
        s._start()
    old = _zygote_pid()
    os.kill(old, signal.SIGKILL)
    _Zygote.current.proc.wait()
    with Session([GOOD]) as s:
        r = s.check("ch01.safe_softmax", "correctness")
        assert isinstance(s.proc.proc, _Forked)
    assert r.passed, r.message
    assert _zygote_pid() != old


def test_without_a_zygote_runners_start_the_old_way(monkeypatch, capsys):
    monkeypatch.setattr(_Zygote, "current", None)
    monkeypatch.setattr(_Zygote, "broken", None)
    monkeypatch.setattr(_Zygote, "said", set())

    def fails(self):
        raise runner.ZygoteError("told to fail")
    monkeypatch.setattr(_Zygote, "wait_ready", fails)
    for _ in range(2):
        with Session([GOOD]) as s:
            r = s.check("ch01.safe_softmax", "correctness")
            assert isinstance(s.proc.proc, subprocess.Popen)
        assert r.passed, r.message
    assert capsys.readouterr().err.count("told to fail") == 1  # said once
    monkeypatch.setenv("FLASHCOURSE_ZYGOTE", "0")
    monkeypatch.setattr(_Zygote, "broken", None)
    with Session([GOOD]) as s:
        assert s.check("ch01.safe_softmax", "correctness").passed
        assert isinstance(s.proc.proc, subprocess.Popen)


def measure_start(n: int) -> list[tuple[float, float]]:
    """Runner start as the judge sees it: asked -> first "cell" message, and -> "loaded" (one small cell)."""
    rows = []
    for _ in range(n):
        t0 = time.perf_counter()
        p = runner._Process()
        p.send({"cells": [GOOD.to_json()], "dir": p.dir, "skip": []})
        first = None
        while True:
            m = p.receive(300)
            if "cell" in m and "loaded" not in m:
                first = first or time.perf_counter() - t0
                continue
            break
        loaded = time.perf_counter() - t0
        kind = type(p.proc).__name__
        p.send({"op": "quit"})
        p.kill()
        rows.append((first, loaded))
        print(f"runner start ({kind}): first cell {first:.3f} s, loaded {loaded:.3f} s", flush=True)
    return rows


if __name__ == "__main__":  # python tests/test_zygote.py [N]: measure (FLASHCOURSE_ZYGOTE=0 for the old path)
    import sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    measure_start(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
    if _Zygote.current is not None:
        print("zygote:", _Zygote.current.ready)
