"""`make lab` and `make formgrader` serve the course: lab/serve.sh, checked over HTTP (no browser).

Both run on a copy of the course (tests/conftest.py: lab_server). tests/test_browser.py drives the
student view in a real browser. The student's working copy (lab/workcopy.py) is tested here without a server too.
"""
import hashlib
import io
import json
import os
import re
import shutil
import sys
import urllib.error
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "lab"))
import workcopy  # noqa: E402

CH01 = "ch01_softmax/ch01_softmax.ipynb"  # in the student's server: the working copy work/
CHAPTERS = ["ch01_softmax", "ch02_reductions", "ch03_online_softmax", "ch04_flash_attention", "ch05_fused_norms",
            "ch06_low_precision", "ch07_cross_entropy", "ch08_backward"]
INSTRUCTOR_PLUGINS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                      "@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:course-list", "@jupyter/nbgrader:menu"]


def _page_config(server) -> dict:
    html = server.get("/lab").read().decode()
    m = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', html, re.S)
    assert m, "no jupyter-config-data in /lab"
    return json.loads(m.group(1))


def _status(server, path: str) -> int:
    try:
        return server.get(path).status
    except urllib.error.HTTPError as e:
        return e.code


# The Makefile's default LAB_ARGS, which lab/serve.sh must accept on top of its own defaults.
MAKE_LAB_ARGS = ("--ip=127.0.0.1",) + (("--allow-root",) if os.geteuid() == 0 else ())


@pytest.fixture(scope="module")
def student(lab_server):
    return lab_server("student", args=MAKE_LAB_ARGS)


def test_student_lab_opens_chapter_1_in_the_working_copy(student):
    # The root URL (what `make lab` opens) lands on chapter 1 ...
    landing = student.get("/")
    assert landing.geturl().split("?")[0] == f"{student.base}/lab/tree/{CH01}"
    assert "JupyterLab" in landing.read().decode()
    # ... in a server whose root is the working copy work/: every chapter, with the release's cells.
    listing = json.load(student.get("/api/contents"))
    release = os.path.join(student.course, "release")
    chapters = sorted(ch for ch in os.listdir(release) if os.path.isfile(os.path.join(release, ch, f"{ch}.ipynb")))
    assert set(CHAPTERS) <= set(chapters)
    assert sorted(i["name"] for i in listing["content"] if i["type"] == "directory") == chapters + ["course"]
    for chapter in chapters:
        nb = json.load(student.get(f"/api/contents/{chapter}/{chapter}.ipynb"))
        with open(os.path.join(student.course, "release", chapter, f"{chapter}.ipynb")) as f:
            release = json.load(f)["cells"]
        assert nb["type"] == "notebook"
        assert [(c["id"], c["source"]) for c in nb["content"]["cells"]] == [(c["id"], "".join(c["source"]))
                                                                           for c in release]
    # what the chapters link to outside their folder is there too
    assert student.get("/files/course/GLOSSARY.md").status == 200
    assert student.get("/files/course/diagrams/memory_hierarchy.png").read()[:4] == b"\x89PNG"
    assert "python3" in json.load(student.get("/api/kernelspecs"))["kernelspecs"]
    assert "not a subdirectory of the notebook server root" not in student.log()


def test_student_lab_has_validate_and_no_instructor_tools(student):
    config = _page_config(student)
    disabled = config["disabledExtensions"]
    disabled = set(disabled) if isinstance(disabled, list) else {k for k, v in disabled.items() if v}
    assert set(INSTRUCTOR_PLUGINS) <= disabled
    assert "@jupyter/nbgrader:validate-assignment" not in disabled
    extensions = {e["name"] for e in config["federated_extensions"]}
    assert "@jupyter/nbgrader" in extensions
    if os.path.isdir(os.path.join(student.course, "course", "labextension", "@flashcourse", "cuda-cells")):
        assert "@flashcourse/cuda-cells" in extensions
    # The course's mode, as course/mode.py decides it in the server's environment (the kernels'): the
    # extension's Validate note reads it (lab/student/jupyter_lab_config.py).
    assert config.get("flashcourseMode") == "cpu"  # the test servers run with FLASHCOURSE_MODE=cpu
    # Server side: validate is there, the formgrader is not.
    assert json.load(student.get("/nbgrader_version?version=0.9.6"))["success"]
    assert _status(student, "/formgrader") == 404


def test_saving_an_untouched_notebook_does_not_change_its_file(student):
    """The front end swaps in the kernel's language_info (Python version and all); saving keeps the file's."""
    path = os.path.join(student.course, "work", CH01)
    before = open(path, "rb").read()
    model = json.load(student.get(f"/api/contents/{CH01}"))
    nb = model["content"]
    # the copy holds the kernel's own language_info (the release's is the stub {"name": "python"})
    assert nb["metadata"]["language_info"]["name"] == "python" and nb["metadata"]["language_info"]["version"]
    nb["metadata"]["language_info"] = {"name": "python", "version": "3.99.0", "mimetype": "text/x-python",
                                       "codemirror_mode": {"name": "ipython", "version": 3},
                                       "file_extension": ".py", "nbconvert_exporter": "python",
                                       "pygments_lexer": "ipython3"}
    body = json.dumps({"type": "notebook", "format": "json", "content": nb}).encode()
    req = urllib.request.Request(f"{student.base}/api/contents/{CH01}", data=body, method="PUT",
                                 headers={"Authorization": f"token {student.token}",
                                          "Content-Type": "application/json"})
    assert urllib.request.urlopen(req, timeout=10).status == 200
    assert open(path, "rb").read() == before


def test_formgrader_is_the_instructor_view(lab_server, student):
    instructor = lab_server("instructor", course_dir=student.course)
    landing = instructor.get("/")
    assert landing.geturl().split("?")[0] == f"{instructor.base}/lab" and "formgrader=true" in landing.geturl()
    disabled = _page_config(instructor)["disabledExtensions"]
    disabled = set(disabled) if isinstance(disabled, list) else {k for k, v in disabled.items() if v}
    assert not disabled & set(INSTRUCTOR_PLUGINS)
    assert _status(instructor, "/formgrader") == 200
    assignments = json.load(instructor.get("/formgrader/api/assignments", timeout=60))
    assert {"ch01_softmax"} <= {a["name"] for a in assignments}, assignments
    assert "not a subdirectory of the notebook server root" not in instructor.log()


# --- the working copy, without a server ----------------------------------------------------------------------
def _course(tmp_path) -> str:
    course = tmp_path / "course"
    for ch in CHAPTERS[:2]:
        os.makedirs(course / "release" / ch)
        shutil.copy(os.path.join(ROOT, "release", ch, f"{ch}.ipynb"), course / "release" / ch)
    shutil.copytree(os.path.join(ROOT, "course", "diagrams"), course / "course" / "diagrams")
    shutil.copy(os.path.join(ROOT, "course", "GLOSSARY.md"), course / "course")
    return str(course)


def _update(course, work) -> list[str]:
    out = io.StringIO()
    workcopy.update(course, work, out=out)
    return out.getvalue().splitlines()


def test_the_working_copy_is_made_once_and_never_overwritten(tmp_path):
    course, work = _course(tmp_path), str(tmp_path / "work")
    lines = _update(course, work)
    assert len(lines) == 1 and "your working copy" in lines[0], lines
    ch1, ch2 = CHAPTERS[:2]
    mine = os.path.join(work, ch1, f"{ch1}.ipynb")
    release = os.path.join(course, "release", ch1, f"{ch1}.ipynb")
    nb, rel = json.load(open(mine)), json.load(open(release))
    assert nb["cells"] == rel["cells"] and nb["nbformat_minor"] == rel["nbformat_minor"]
    from ipykernel.ipkernel import IPythonKernel
    assert nb["metadata"]["language_info"] == IPythonKernel.language_info  # what the kernel reports: unmodified
    assert nb["metadata"]["flashcourse"]["copied_from"] == {
        "path": f"release/{ch1}/{ch1}.ipynb", "sha256": hashlib.sha256(open(release, "rb").read()).hexdigest()}
    # written as Jupyter writes a notebook: a save of the untouched copy rewrites the same bytes
    import nbformat
    assert nbformat.writes(nbformat.reads(open(mine).read(), as_version=4)) + "\n" == open(mine).read()
    # what the chapters link to, resolved as JupyterLab resolves links (never above the server root)
    assert os.path.isfile(os.path.join(work, "course", "GLOSSARY.md"))
    assert os.path.isfile(os.path.join(work, "course", "diagrams", "memory_hierarchy.png"))
    assert os.path.isfile(os.path.join(work, "course", "diagrams", "smem_banks.png"))  # linked from the glossary
    assert not os.path.exists(os.path.join(work, "course", "diagrams", "make_diagrams.py"))

    # the student's edit survives; nothing is said while the release is the same
    with open(mine, "a") as f:
        f.write(" ")
    edited = open(mine, "rb").read()
    assert _update(course, work) == []
    assert open(mine, "rb").read() == edited
    # the release changes: kept, and one line says so (at every start, until the student takes a fresh copy)
    with open(release, "a") as f:
        f.write("\n")
    for _ in range(2):
        lines = _update(course, work)
        assert len(lines) == 1 and f"release/{ch1}/{ch1}.ipynb has changed" in lines[0] and "kept" in lines[0]
        assert open(mine, "rb").read() == edited
    # a fresh copy: delete (or rename) yours and start again
    os.remove(mine)
    assert _update(course, work) == [f"flashcourse: copied into {work}/: {ch1}"]  # (shown relative when below)
    assert json.load(open(mine))["cells"] == json.load(open(release))["cells"]
    # a chapter added to the course later is copied in; the others are left alone
    theirs = open(os.path.join(work, ch2, f"{ch2}.ipynb"), "rb").read()
    os.makedirs(os.path.join(course, "release", "ch07_new"))
    shutil.copy(os.path.join(course, "release", ch2, f"{ch2}.ipynb"),
                os.path.join(course, "release", "ch07_new", "ch07_new.ipynb"))
    assert _update(course, work) == [f"flashcourse: copied into {work}/: ch07_new"]
    assert open(os.path.join(work, ch2, f"{ch2}.ipynb"), "rb").read() == theirs
    # the linked course files are the course's: brought up to date
    glossary = os.path.join(course, "course", "GLOSSARY.md")
    with open(glossary, "a") as f:
        f.write("\nOne more term.\n")
    _update(course, work)
    assert open(os.path.join(work, "course", "GLOSSARY.md")).read() == open(glossary).read()


def test_importing_nbformat_does_not_build_rfc3987_grammars():
    """Every nbgrader run, grading worker and Jupyter server imports nbformat, hence jsonschema, which imports
    rfc3987_syntax whenever it is installed (38 Lark grammars built, 2-3 s on two cores). `make install` removes it
    (and the GPU wheelhouse leaves it out); this fails if a dependency change brings it back."""
    import subprocess
    import sys
    code = "import sys, nbformat; print('rfc3987_syntax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False", "rfc3987_syntax is installed again: make install should uninstall it"
    from autograder.instructor.wheelhouse import LEAVE_OUT
    assert {"rfc3987_syntax", "lark"} <= LEAVE_OUT
