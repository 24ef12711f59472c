"""The GPU lock: quiet checks share a GPU, a timed check has it alone (class grading, mutation testing)."""
from __future__ import annotations

import contextlib
import os
import re
import tempfile


class GpuLock:
    """A readers-writer lock between processes (flock on two files): `shared()` for work that may run beside
    other work, `exclusive()` for a timed check. A turnstile taken by both makes a waiting writer block new
    readers, so timed checks are not starved by a stream of quiet ones."""

    def __init__(self, name: str):
        base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()
        self.paths = [os.path.join(base, f"flashcourse-gpu-{name}.{k}") for k in ("turnstile", "lock")]

    @contextlib.contextmanager
    def _hold(self, mode: int):
        import fcntl
        fds = [os.open(p, os.O_RDWR | os.O_CREAT, 0o666) for p in self.paths]
        try:
            fcntl.flock(fds[0], fcntl.LOCK_EX)
            fcntl.flock(fds[1], mode)
            fcntl.flock(fds[0], fcntl.LOCK_UN)
            yield
        finally:
            for fd in fds:
                os.close(fd)  # closing drops the locks

    def shared(self):
        import fcntl
        return self._hold(fcntl.LOCK_SH)

    def exclusive(self):
        import fcntl
        return self._hold(fcntl.LOCK_EX)


class GpuTurns:
    """One submission's turns on its GPU: each quiet check shares it; the timed checks (graded last) take it alone
    once, together, until close(). Each time a timed check asks for the GPU it waits until every quiet check
    running beside it ends (their compiles included) and blocks new ones: one such wait per submission, not one
    per timed check (on an H100 a ch01 timed check holds the GPU about 0.75 s, and the wait before it was as
    long or longer). No lock (CPU mode): no turns."""

    def __init__(self, lock: GpuLock | None):
        self.lock, self.alone = lock, None

    def for_check(self, timed: bool):
        if self.lock is None or self.alone is not None:
            return contextlib.nullcontext()
        if not timed:
            return self.lock.shared()
        alone = contextlib.ExitStack()
        alone.enter_context(self.lock.exclusive())  # held from here: a failure to take it leaves no false claim
        self.alone = alone
        return contextlib.nullcontext()

    def close(self) -> None:
        if self.alone is not None:
            self.alone.close()
            self.alone = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def gpu_name() -> str:
    """The GPU this process grades on (its first visible device), as a lock name."""
    v = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip() or "0"
    return re.sub(r"[^A-Za-z0-9_-]", "_", v)
