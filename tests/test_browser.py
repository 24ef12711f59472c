"""A student in JupyterLab, in a real browser.

The server is the one `make lab` starts (`lab/serve.sh student`), on a copy of the course made a git
repository (so nothing under the repository is saved, and `git status` of the copy shows what a student's
session changed), driven through Debian's chromium by Playwright, in CPU mode. The server root is the
student's working copy, work/ in the course copy (lab/workcopy.py). The tests run in order and share one
page, as one student session: the student view; Validate on the blank chapter 1; every chapter opened from
the file browser, with no modified marker (and saving an untouched notebook leaves its file unchanged); a
visible test on the blank notebook; the first exercise filled in and passing; saving it changes no tracked
file; a second start of `make lab` keeps the student's notebook and says which release changed; Restart &
Run All on a blank chapter 1 (the release) and on the solved one (the instructor's source notebook, each copied into
the working copy) reaching the last cell; a Validate
that succeeds saying, in CPU mode only, that the GPU checks were not run.

Screenshots, the outputs of the solved run, the browser console and the server log are written to
$FLASHCOURSE_ARTIFACTS (default: a pytest temporary directory); the location is printed.

Needs Debian's chromium (installed with apt-get when missing and running as root, else skipped) and
the `playwright` package (the `dev` extra; pip-installed when missing). Playwright never downloads a
browser here: it is given chromium's binary.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

CHROMIUM = "/usr/lib/chromium/chromium"  # the binary itself; /usr/bin/chromium is Debian's shell wrapper
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",  # else it still tries outside hosts
                 # a page whose HTML a test rewrote (page.route) has no address space of its own, so Chromium's
                 # local-network-access check blocked its websockets to 127.0.0.1 (the kernel never connected)
                 "--disable-features=LocalNetworkAccessChecks"]
CHAPTERS = ["ch01_softmax", "ch02_reductions", "ch03_online_softmax", "ch04_flash_attention", "ch05_fused_norms",
            "ch06_low_precision", "ch07_cross_entropy", "ch08_backward"]
WORK = "work"  # the working copy, in the course root: `make lab`'s server root
CH01 = "ch01_softmax/ch01_softmax.ipynb"  # paths in the server (the working copy)
SOLVED = "ch01_softmax/ch01_softmax_solved.ipynb"  # source/ch01_softmax/ch01_softmax.ipynb, copied there
BLANK_RUN = "ch01_softmax/ch01_softmax_run_all.ipynb"  # release/ch01_softmax/ch01_softmax.ipynb, copied there
SAFE_SOFTMAX = ("def safe_softmax(x):\n"
                "    e = np.exp(x - x.max(-1, keepdims=True))\n"
                "    return e / e.sum(-1, keepdims=True)\n")
PASSES = "ch01_softmax/validate_passes.ipynb"  # written by the Validate-success test: its one graded cell passes
PASSES_GPU = "ch01_softmax/validate_passes_gpu.ipynb"  # the same notebook, opened in the page that says GPU mode
CPU_NOTE = "In CPU mode (no GPU on this machine) the speed checks and the CUDA checks that need a GPU were not run"
KERNEL_START = 120_000  # ms; a kernel's first `import torch` on 2 busy cores
CHECK = 240_000  # ms; a check runs in its own process (imports torch, re-runs the solution cells)


def _ensure_chromium():
    if os.path.exists(CHROMIUM):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip(f"needs Debian's chromium ({CHROMIUM}): `apt-get install -y chromium` as root")
    install = ["apt-get", "install", "-y", "chromium"]
    for cmd in (install, ["apt-get", "update"], install):
        if os.path.exists(CHROMIUM):
            break
        subprocess.run(cmd, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"`apt-get install -y chromium` did not provide {CHROMIUM}")


def _ensure_playwright():
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "playwright"],
                           env=dict(os.environ, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1"), capture_output=True, text=True)
        if r.returncode:
            pytest.skip(f"could not pip-install playwright: {r.stderr.strip()[-500:]}")


@pytest.fixture(scope="module")
def artifacts(request, tmp_path_factory):
    path = os.environ.get("FLASHCOURSE_ARTIFACTS") or str(tmp_path_factory.mktemp("browser-artifacts"))
    os.makedirs(path, exist_ok=True)
    line = f"\nbrowser test artifacts (screenshots, outputs, logs): {path}"
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if capture:
        with capture.global_and_fixture_disabled():
            print(line, flush=True)
    else:
        print(line)
    return path


class Student:
    """One browser page on the student server, with the few gestures the tests need.

    Text is read as textContent: JupyterLab renders cells out of view with `content-visibility: auto`,
    and innerText is empty for those.
    """

    def __init__(self, page, server, artifacts):
        self.page, self.server, self.artifacts = page, server, artifacts
        self.console: list[str] = []
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))

    def shot(self, name: str, target=None) -> str:
        path = os.path.join(self.artifacts, f"{name}.png")
        (target or self.page).screenshot(path=path)
        return path

    @property
    def tab(self):  # its tab in the main area
        return self.page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")

    @property
    def panel(self):  # the notebook in front
        return self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")

    def cells(self):
        return self.panel.locator(".jp-Notebook .jp-Cell")

    def cell(self, notebook: dict, cell_id: str):
        index = next(i for i, c in enumerate(notebook["cells"]) if c.get("id") == cell_id)
        return self.cells().nth(index)

    def wait_notebook(self, path: str, notebook: dict):
        from playwright.sync_api import expect
        name = os.path.basename(path)
        expect(self.tab.locator(".lm-TabBar-tabLabel")).to_have_text(
            name, timeout=60_000)
        expect(self.cells()).to_have_count(len(notebook["cells"]), timeout=180_000)  # 73 cells: slow on a busy machine
        self.wait_idle()

    def wait_idle(self, timeout=KERNEL_START):
        from playwright.sync_api import expect
        expect(self.panel.locator(".jp-Notebook-ExecutionIndicator")).to_have_attribute(
            "data-status", "idle", timeout=timeout)

    def run(self, cell):
        """Select a cell and run it with Shift+Enter, as a student does."""
        cell.locator(".jp-InputPrompt").first.click()
        self.page.keyboard.press("Shift+Enter")

    def run_and_wait(self, cell, timeout=CHECK) -> str:
        """Run a code cell and wait until it has finished (a new execution count); its output text."""
        prompt = cell.locator(".jp-InputPrompt").first
        before = prompt.text_content().strip()
        self.run(cell)
        deadline = time.time() + timeout / 1000
        while True:
            now = prompt.text_content().strip()
            if re.fullmatch(r"\[\d+\]:", now) and now != before:
                return self.output(cell)
            assert time.time() < deadline, f"cell still running ({now}) after {timeout / 1000:.0f} s"
            time.sleep(0.5)

    def output(self, cell) -> str:
        return cell.locator(".jp-OutputArea").text_content()  # not innerText: empty for cells scrolled away

    def prompts(self) -> list[str]:
        return self.panel.evaluate(
            "p => [...p.querySelectorAll('.jp-Notebook .jp-CodeCell')]"
            ".map(c => c.querySelector('.jp-InputPrompt').textContent.trim())")

    def open_from_file_browser(self, path: str):
        """Home in the file browser, then double-click each folder and the notebook.

        The listing re-renders when the server's files change (a save, the periodic refresh), and JupyterLab
        may move the browser to the active notebook's folder after the home click: a double-click can be
        lost, or land in another folder. So the whole walk, from home, is retried until the notebook's tab
        shows (a step retried in place would look for the folder it already left).
        """
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        from playwright.sync_api import expect
        browser = self.page.locator("#filebrowser")
        if not browser.is_visible():
            self.page.locator('.jp-SideBar [data-id="filebrowser"]').click()
        crumbs = browser.locator(".jp-BreadCrumbs")
        parts = path.split("/")
        for attempt in range(5):
            try:
                browser.locator(".jp-BreadCrumbs-home").click()
                self._item(parts[0]).wait_for(timeout=10_000)
                for n, part in enumerate(parts):
                    self._item(part).dblclick(timeout=10_000)
                    if n == len(parts) - 1:
                        expect(self.tab.locator(".lm-TabBar-tabLabel")).to_have_text(part, timeout=15_000)
                    else:
                        expect(crumbs).to_contain_text(part, timeout=10_000)
                return
            except (AssertionError, PlaywrightTimeout):
                if attempt == 4:
                    raise

    def _item(self, name: str):
        return self.page.locator("#filebrowser .jp-DirListing-item").filter(
            has=self.page.locator(".jp-DirListing-itemText", has_text=re.compile(rf"^{re.escape(name)}$")))

    def menu(self, *labels: str):
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{re.escape(labels[0])}$")).click()
        for label in labels[1:]:
            self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{re.escape(label)}")).first.click()

    def assert_unmodified(self, what: str, seconds: float = 3.0):
        """The notebook in front shows no modified marker, now and for a few seconds more (the kernel's
        language_info, which JupyterLab writes into the notebook, arrives around the kernel's first idle)."""
        deadline = time.time() + seconds
        while True:
            assert "jp-mod-dirty" not in (self.tab.get_attribute("class") or ""), f"{what} opened marked modified"
            if time.time() > deadline:
                return
            time.sleep(0.25)

    def save(self):
        self.panel.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})  # focus, command mode
        self.page.keyboard.press("Control+s")
        from playwright.sync_api import expect
        expect(self.tab).not_to_have_class(
            re.compile(r"\bjp-mod-dirty\b"), timeout=30_000)


def _settled(path: str, timeout: float = 30.0) -> bytes:
    """The file's bytes once a save has finished writing them: a notebook (valid JSON) whose size and
    modification time stay put for half a second (a save is asynchronous: the tab can look clean first)."""
    deadline, last = time.time() + timeout, None
    while True:
        st = os.stat(path)
        data = open(path, "rb").read()
        try:
            json.loads(data)
            ok = True
        except ValueError:
            ok = False
        if ok and last == (st.st_size, st.st_mtime_ns):
            return data
        if time.time() > deadline:
            return data
        last = (st.st_size, st.st_mtime_ns) if ok else None
        time.sleep(0.5)


def _git(course: str, *args: str) -> str:
    return subprocess.run(["git", "-C", course, "-c", "user.name=test", "-c", "user.email=test@localhost", *args],
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A copy of the course, committed in a git repository of its own."""
    from conftest import copy_course
    path = copy_course(tmp_path_factory.mktemp("course") / "course")
    _git(path, "init", "-q")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "the course as the test found it")
    return path


@pytest.fixture(scope="module")
def student(lab_server, artifacts, course):
    _ensure_chromium()
    _ensure_playwright()
    from playwright.sync_api import sync_playwright
    server = lab_server("student", course_dir=course)
    shutil.copy(os.path.join(course, "source", "ch01_softmax", "ch01_softmax.ipynb"), _file(server, SOLVED))
    shutil.copy(os.path.join(course, "release", "ch01_softmax", "ch01_softmax.ipynb"), _file(server, BLANK_RUN))
    with sync_playwright() as pw, tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        context = pw.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, chromium_sandbox=False, args=CHROMIUM_ARGS,
            viewport={"width": 1440, "height": 960})
        context.set_default_timeout(30_000)
        s = Student(context.new_page(), server, artifacts)
        s.page.goto(server.url("/"))  # where `make lab` sends the browser: the server's default URL
        s.wait_notebook(CH01, _notebook(server, CH01))
        try:
            yield s
        finally:
            try:
                s.shot("zz-last-state")
            except Exception:  # noqa: BLE001  (a page that is gone has no last state)
                pass
            with open(os.path.join(artifacts, "browser-console.txt"), "w") as f:
                f.write("\n".join(s.console) + "\n")
            context.close()
            shutil.copy(server.log_path, os.path.join(artifacts, "jupyter-server.log"))


def _file(server, path: str) -> str:
    """Where a notebook the server shows lies on disk."""
    return os.path.join(server.course, WORK, path)


def _chapters(course: str) -> list[str]:
    """The chapters of the course: release/CH/CH.ipynb (what the working copy holds)."""
    release = os.path.join(course, "release")
    return sorted(ch for ch in os.listdir(release) if os.path.isfile(os.path.join(release, ch, f"{ch}.ipynb")))


def _notebook(server, path: str) -> dict:
    with open(_file(server, path)) as f:
        return json.load(f)


def test_make_lab_opens_chapter_1_for_a_student(student):
    from playwright.sync_api import expect
    page, server = student.page, student.server  # the page opened the server's root URL, as `make lab` does
    nb = _notebook(server, CH01)
    student.wait_notebook(CH01, nb)
    assert page.url.split("?")[0].endswith(f"/lab/tree/{CH01}")
    student.assert_unmodified(CH01)
    # Served from the working copy: the file browser is in ch01_softmax, one level below the chapters.
    expect(page.locator("#filebrowser .jp-BreadCrumbs")).to_contain_text("ch01_softmax", timeout=30_000)
    listing = sorted(os.listdir(os.path.join(server.course, WORK)))
    assert listing == sorted(_chapters(server.course) + ["course"]), listing
    # The chapter's diagrams show (its links lead out of its folder, to the working copy's course/).
    images = student.panel.locator(".jp-RenderedMarkdown img")
    expect(images.first).to_be_attached(timeout=30_000)
    images.first.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=images.first.element_handle(),
                           timeout=30_000)
    # nbgrader for a student: Validate, and none of the instructor's tools.
    expect(student.panel.locator(".validate-button")).to_be_visible()
    menus = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
    assert "Kernel" in menus and "Nbgrader" not in menus, menus
    assert page.locator('[data-id="nbgrader-create_assignemnt"]').count() == 0  # nbgrader's own spelling
    assert page.locator("#nbgrader-formgrader").count() == 0
    student.shot("01-student-opens-chapter-1")


def test_validate_on_the_blank_notebook_reports_failures(student):
    from playwright.sync_api import expect
    page, server = student.page, student.server
    nb = _notebook(server, CH01)
    before = open(_file(server, CH01), "rb").read()
    student.wait_notebook(CH01, nb)
    student.panel.locator(".validate-button").click()  # saves the notebook, then validates the file
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_be_visible(timeout=CHECK)
    message = dialog.locator("#validation-message")
    expect(message).to_be_visible(timeout=10_000)
    student.shot("02-validate-blank-chapter-1")
    text = message.inner_text()
    classes = message.get_attribute("class") or ""
    page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept").click()
    assert "validation-failed" in classes and "The following cell failed" in text, text[:3000]
    assert CPU_NOTE not in text, "the CPU-mode note belongs to a successful Validate only"
    assert "not implemented" in text.lower(), text[:3000]
    # Validate saved the untouched notebook: the file did not change (the kernel's language_info is not written).
    assert _settled(_file(server, CH01)) == before


def test_every_chapter_opens_unmodified_from_the_file_browser_and_saving_it_changes_nothing(student):
    from playwright.sync_api import expect
    server = student.server
    for n, chapter in enumerate(CHAPTERS, 1):
        path = f"{chapter}/{chapter}.ipynb"
        before = open(_file(server, path), "rb").read()
        student.open_from_file_browser(path)
        student.wait_notebook(path, _notebook(server, path))
        expect(student.panel.locator(".validate-button")).to_be_visible()
        student.shot(f"03-{n}-opened-{chapter}")
        student.assert_unmodified(path)
        student.save()
        assert _settled(_file(server, path)) == before, f"saving the untouched {path} changed it"


def test_visible_test_on_the_blank_notebook_says_not_implemented(student):
    nb = _notebook(student.server, CH01)
    student.open_from_file_browser(CH01)
    student.wait_notebook(CH01, nb)
    for cell_id in ("setup", "safe_softmax"):
        out = student.run_and_wait(student.cell(nb, cell_id), KERNEL_START)
        assert "Error" not in out, f"cell {cell_id}: {out}"
    test = student.cell(nb, "test_safe_softmax")
    out = student.run_and_wait(test)
    test.scroll_into_view_if_needed()
    student.shot("04-blank-visible-test")
    assert "not implemented" in out.lower() and "✓" not in out, out
    assert "Traceback" not in out and 'File "' not in out, f"a failed check shows only its message: {out}"


def test_filled_exercise_passes_its_visible_test(student):
    from playwright.sync_api import expect
    nb = _notebook(student.server, CH01)
    student.open_from_file_browser(CH01)
    student.wait_notebook(CH01, nb)
    student.run_and_wait(student.cell(nb, "setup"), KERNEL_START)
    exercise = student.cell(nb, "safe_softmax")
    exercise.locator(".cm-content").click()
    student.page.keyboard.press("Control+a")
    student.page.keyboard.insert_text(SAFE_SOFTMAX)  # one input event: no auto-indent or closing brackets
    expect(exercise.locator(".cm-content")).to_contain_text("keepdims=True")
    out = student.run_and_wait(exercise, KERNEL_START)  # Shift+Enter, from the editor
    assert not out.strip(), out
    test = student.cell(nb, "test_safe_softmax")
    out = student.run_and_wait(test)
    test.scroll_into_view_if_needed()
    student.shot("05-filled-exercise-passes")
    assert "✓" in out and "not implemented" not in out.lower(), out


def test_saving_the_students_work_changes_no_tracked_file(student):
    server = student.server
    nb = _notebook(server, CH01)
    student.open_from_file_browser(CH01)
    student.wait_notebook(CH01, nb)
    student.save()
    saved = json.loads(_settled(_file(server, CH01)))
    exercise = next(c for c in saved["cells"] if c.get("id") == "safe_softmax")
    test = next(c for c in saved["cells"] if c.get("id") == "test_safe_softmax")
    assert "keepdims=True" in "".join(exercise["source"]) and test["outputs"], "the student's work was not saved"
    changed = _git(server.course, "status", "--porcelain", "--untracked-files=all")
    assert not changed, f"a student's session changed the course's files:\n{changed}"


def test_a_second_start_keeps_the_students_notebook(student, lab_server):
    """`make lab` again, after the release of chapter 2 changed: nothing in the working copy is overwritten, one
    line says chapter 2's release changed, and chapter 1 opens with the student's code, unmodified."""
    from playwright.sync_api import expect
    course = student.server.course
    kept = {ch: open(_file(student.server, f"{ch}/{ch}.ipynb"), "rb").read() for ch in _chapters(course)}
    ch02 = os.path.join(course, "release", "ch02_reductions", "ch02_reductions.ipynb")
    nb = json.load(open(ch02))
    nb["cells"][0]["source"] = "".join(nb["cells"][0]["source"]) + "\n\nA new sentence in the release.\n"
    with open(ch02, "w") as f:
        json.dump(nb, f, indent=1, ensure_ascii=False)
    again = lab_server("student", course_dir=course)
    lines = [line for line in again.log().splitlines() if line.startswith("flashcourse:")]
    assert len(lines) == 1 and "release/ch02_reductions/ch02_reductions.ipynb has changed" in lines[0] \
        and "kept" in lines[0], lines
    assert {ch: open(_file(again, f"{ch}/{ch}.ipynb"), "rb").read() for ch in kept} == kept
    page = student.page.context.new_page()
    try:
        second = Student(page, again, student.artifacts)
        page.goto(again.url("/"))
        second.wait_notebook(CH01, _notebook(again, CH01))
        second.assert_unmodified(f"{CH01} (second start)")
        exercise = second.cell(_notebook(again, CH01), "safe_softmax")
        exercise.scroll_into_view_if_needed()
        expect(exercise.locator(".cm-content")).to_contain_text("keepdims=True")
        second.shot("07-second-start-keeps-the-work")
    finally:
        page.close()


@pytest.mark.parametrize("which", ["blank", "solved"])
def test_restart_and_run_all_on_chapter_1_reaches_its_last_cell(student, which):
    """Blank (a copy of the release, as a student first opens it): every cell runs, an unsolved exercise's test
    says "not implemented yet" and nothing stops the notebook. Solved (the instructor's notebook): every check that
    CPU mode runs passes."""
    from playwright.sync_api import expect
    path = BLANK_RUN if which == "blank" else SOLVED
    nb = _notebook(student.server, path)
    student.open_from_file_browser(path)
    student.wait_notebook(path, nb)
    student.menu("Kernel", "Restart Kernel and Run All Cells")
    student.page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept").click()
    t0 = time.time()
    expect(student.panel.locator(".jp-InputPrompt", has_text="[*]").first).to_be_attached(timeout=60_000)
    deadline = t0 + 600
    while True:  # done when nothing is queued or running, twice in a row
        if all("*" not in p for p in student.prompts()):
            time.sleep(2)
            if all("*" not in p for p in student.prompts()):
                break
        assert time.time() < deadline, f"Run All still running after 600 s: {student.prompts()}"
        time.sleep(2)
    elapsed = time.time() - t0
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    prompts = student.prompts()
    outputs = student.panel.evaluate(
        "p => [...p.querySelectorAll('.jp-Notebook .jp-CodeCell')]"
        ".map(c => c.querySelector('.jp-OutputArea').textContent)")
    with open(os.path.join(student.artifacts, f"06-run-all-{which}-outputs.txt"), "w") as f:
        f.write(f"Restart & Run All of {path}: {elapsed:.0f} s\n\n")
        for c, p, o in zip(code, prompts, outputs):
            f.write(f"--- cell {c['id']} {p}\n{o}\n")
    not_run = [(c["id"], p) for c, p in zip(code, prompts) if not re.fullmatch(r"\[\d+\]:", p)]
    first = next((i for i, (c, p) in enumerate(zip(code, prompts)) if not re.fullmatch(r"\[\d+\]:", p)), None)
    if first is not None:  # screenshot where Run All stopped (the cell before the first cell not run)
        stopped = student.cell(nb, code[max(first - 1, 0)]["id"])
        stopped.scroll_into_view_if_needed()
        student.shot(f"06-run-all-{which}-stopped-here")
    else:
        student.shot(f"06-run-all-{which}-completed")
    assert not not_run, (f"Run All stopped at cell {code[max(first - 1, 0)]['id']}: "
                         f"{outputs[max(first - 1, 0)][-2000:]}; not run: {not_run}")
    if which == "blank":
        assert not [o for o in outputs if "Traceback" in o], "a cell showed a traceback"
        assert sum("not implemented yet" in o for o in outputs) >= 3, outputs
        assert not any("✓" in o for o in outputs), "a blank exercise passed a check"
        return
    skipped = [o for o in outputs if "skipped: needs a GPU" in o]
    assert skipped, "no GPU-only check said it was skipped in CPU mode"
    assert sum("✓" in o for o in outputs) >= 3, outputs


def _page_mode(page) -> str | None:
    """The course's mode as the page's config says it (lab/student/jupyter_lab_config.py, from course/mode.py)."""
    return page.evaluate("() => JSON.parse(document.getElementById('jupyter-config-data').textContent)"
                         ".flashcourseMode ?? null")


def _validate_succeeds(s: Student, shot: str) -> str:
    """Validate the notebook in front; the success dialog's text (screenshot `shot`), the dialog closed."""
    from playwright.sync_api import expect
    s.panel.locator(".validate-button").click()
    message = s.page.locator(".jp-Dialog #validation-message")
    expect(message).to_be_visible(timeout=CHECK)
    text, classes = message.inner_text(), message.get_attribute("class") or ""
    s.shot(shot)
    s.page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept").click()
    expect(s.page.locator(".jp-Dialog")).to_have_count(0)
    assert "validation-success" in classes and "Success! Your notebook passes all the tests." in text, text[:3000]
    return text


def test_a_successful_validate_says_the_gpu_checks_did_not_run_in_cpu_mode_only(student):
    """nbgrader's "Success! Your notebook passes all the tests." gets the course's note (its front-end extension,
    plugin validate-note) when the page says CPU mode, and nothing when it says GPU mode. The notebook's one graded
    cell passes in either mode and imports nothing, so Validate is quick; GPU mode is the same server's page with
    its config's flashcourseMode rewritten to "gpu" on the way to the browser (this machine has no GPU)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
    grade = {"grade": True, "grade_id": "passes", "locked": True, "points": 1, "schema_version": 3,
             "solution": False, "task": False}
    nb = new_notebook(cells=[new_markdown_cell("A notebook that passes Validate."),
                             new_code_cell("assert 1 + 1 == 2", metadata={"nbgrader": grade})],
                      metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(nb, _file(student.server, PASSES))
    nbformat.write(nb, _file(student.server, PASSES_GPU))  # its own file, so its own kernel: a second page on the
    cells = json.load(open(_file(student.server, PASSES)))  # same notebook shares the first one's (CI: never connected)

    assert _page_mode(student.page) == "cpu"  # the servers here run with FLASHCOURSE_MODE=cpu
    student.open_from_file_browser(PASSES)
    student.wait_notebook(PASSES, cells)
    text = _validate_succeeds(student, "08-validate-success-cpu-mode-note")
    assert CPU_NOTE in text and "They are graded on a GPU." in text, text
    assert text.count(CPU_NOTE) == 1, text

    def as_gpu(route):
        html = route.fetch().text()
        gpu = re.sub(r'("flashcourseMode":\s*)"cpu"', r'\1"gpu"', html)
        assert gpu != html, "no flashcourseMode in the page config"
        route.fulfill(status=200, headers={"content-type": "text/html"}, body=gpu)

    # The same page, navigated to a workspace of its own: leaving the session's page closes its kernel connections
    # (a dozen notebooks are open by now). A second page beside it never got its kernel connected on CI's machine.
    page = student.page
    match = lambda url: "/lab/workspaces/gpu-mode/" in url  # noqa: E731  (the page's HTML only)
    page.route(match, as_gpu)
    try:
        page.goto(student.server.url(f"/lab/workspaces/gpu-mode/tree/{PASSES_GPU}"))
        student.wait_notebook(PASSES_GPU, cells)
        assert _page_mode(page) == "gpu"
        text = _validate_succeeds(student, "08-validate-success-gpu-mode-no-note")
        assert CPU_NOTE not in text and "GPU" not in text, text
    finally:
        page.unroute(match, as_gpu)
