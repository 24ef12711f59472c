import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("FLASHCOURSE_MODE", "auto")

import course  # noqa: E402,F401  (sets the mode before any Triton kernel is defined)


# --- JupyterLab as `make lab` starts it (lab/serve.sh), on a copy of the course -------------------
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402

import pytest  # noqa: E402

# Not copied: environments, caches, grading output, the front-end extension's build tree.
_NOT_COURSE = shutil.ignore_patterns(".git", ".venv", "node_modules", "__pycache__", "*.egg-info", ".pytest_cache",
                                     ".ruff_cache", ".ipynb_checkpoints", "submitted", "autograded", "feedback",
                                     "gradebook.db")


def _not_course(folder, names):
    # and a student's working copy of the repository's own `make lab` (work/, gitignored)
    return set(_NOT_COURSE(folder, names)) | ({"work"} if os.path.samefile(folder, ROOT) else set())


def copy_course(dst) -> str:
    """The course (working tree, uncommitted files included) copied to dst, so that a server may save there."""
    shutil.copytree(ROOT, dst, ignore=_not_course)
    return str(dst)


class LabServer:
    """`lab/serve.sh MODE` of a course directory on a free port, with a known token and no browser.

    The server runs with its own Jupyter config, runtime and data directories (the user's ~/.jupyter is
    neither read nor written: workspaces and settings land there too) and FLASHCOURSE_MODE=cpu.
    """

    def __init__(self, course_dir: str, mode: str, home: str, args: tuple = ()):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.course, self.mode, self.token = course_dir, mode, "flashcourse-test"
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = os.path.join(home, f"jupyter-{mode}.log")
        env = dict(os.environ, JUPYTER=os.path.join(os.path.dirname(sys.executable), "jupyter"),
                   JUPYTER_CONFIG_DIR=os.path.join(home, "config"), JUPYTER_DATA_DIR=os.path.join(home, "data"),
                   JUPYTER_RUNTIME_DIR=os.path.join(home, "runtime"), FLASHCOURSE_MODE="cpu")
        env.pop("JUPYTER_CONFIG_PATH", None)
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            ["bash", os.path.join(course_dir, "lab", "serve.sh"), mode, "--no-browser", f"--port={self.port}",
             f"--IdentityProvider.token={self.token}", *args],
            env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 90
        while True:
            try:
                self.get("/api/status")
                break
            except OSError:
                if self.proc.poll() is not None or time.time() > deadline:
                    self.stop()
                    raise AssertionError(f"JupyterLab ({mode}) did not start; its log:\n{self.log()}") from None
                time.sleep(0.5)

    def url(self, path: str) -> str:
        return f"{self.base}{path}{'&' if '?' in path else '?'}token={self.token}"

    def get(self, path: str, timeout: float = 10):
        return urllib.request.urlopen(self.url(path), timeout=timeout)

    def log(self) -> str:
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: Jupyter stops and shuts its kernels down
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        try:  # kernels and check workers left over (the server's own process group only)
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=10)
        self._log.close()


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """start(mode="student", course_dir=None, args=()) -> LabServer, on course_dir or else a fresh copy of the
    course; args: more `jupyter lab` options, as `make lab` passes LAB_ARGS."""
    servers = []

    def start(mode: str = "student", course_dir: str | None = None, args: tuple = ()) -> LabServer:
        home = str(tmp_path_factory.mktemp(f"lab-{mode}"))
        course_dir = course_dir or copy_course(os.path.join(home, "course"))
        servers.append(LabServer(course_dir, mode, home, args))
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


# --- a headless Chromium with every outside host unresolvable (NOTES.md), for pages opened from disk ------------
@pytest.fixture
def offline_chromium(tmp_path):
    """A Playwright browser context on Debian's chromium (tests/test_browser.py installs or skips), viewport
    1000x800, a fresh profile. Its lists fill as pages load: `requests` (every URL asked for) and `problems`
    (failed requests, console messages, page errors)."""
    from test_browser import CHROMIUM, CHROMIUM_ARGS, _ensure_chromium, _ensure_playwright
    _ensure_chromium()
    _ensure_playwright()
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, headless=True, chromium_sandbox=False,
            args=CHROMIUM_ARGS, viewport={"width": 1000, "height": 800})
        context.set_default_timeout(30_000)
        context.requests, context.problems = [], []
        context.on("request", lambda r: context.requests.append(r.url))
        context.on("requestfailed", lambda r: context.problems.append(f"failed request {r.url}: {r.failure}"))
        context.on("console", lambda m: context.problems.append(f"console {m.type}: {m.text}"))
        context.on("weberror", lambda e: context.problems.append(f"page error: {e.error}"))
        try:
            yield context
        finally:
            context.close()
