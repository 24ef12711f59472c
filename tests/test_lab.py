"""`make lab` and `make formgrader` serve the course: lab/serve.sh, checked over HTTP (no browser).

Both run on a copy of the course (tests/conftest.py: lab_server). tests/test_browser.py drives the
student view in a real browser.
"""
import json
import os
import re
import urllib.error
import urllib.request

import pytest

CH01 = "release/ch01_softmax/ch01_softmax.ipynb"
CHAPTERS = ["ch01_softmax", "ch02_reductions", "ch03_online_softmax", "ch04_flash_attention", "ch05_fused_norms",
            "ch06_low_precision", "ch07_cross_entropy"]
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


def test_student_lab_opens_chapter_1_in_the_whole_course(student):
    # The root URL (what `make lab` opens) lands on chapter 1 ...
    landing = student.get("/")
    assert landing.geturl().split("?")[0] == f"{student.base}/lab/tree/{CH01}"
    assert "JupyterLab" in landing.read().decode()
    # ... in a server whose root is the course root: every chapter is reachable.
    listing = json.load(student.get("/api/contents/release"))
    assert sorted(i["name"] for i in listing["content"] if i["type"] == "directory") == CHAPTERS
    for chapter in CHAPTERS:
        nb = json.load(student.get(f"/api/contents/release/{chapter}/{chapter}.ipynb"))
        assert nb["type"] == "notebook" and nb["content"]["cells"]
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
    # Server side: validate is there, the formgrader is not.
    assert json.load(student.get("/nbgrader_version?version=0.9.6"))["success"]
    assert _status(student, "/formgrader") == 404


def test_saving_an_untouched_notebook_does_not_change_its_file(student):
    """The front end swaps in the kernel's language_info (Python version and all); saving keeps the file's."""
    path = os.path.join(student.course, CH01)
    before = open(path, "rb").read()
    model = json.load(student.get(f"/api/contents/{CH01}"))
    nb = model["content"]
    assert nb["metadata"]["language_info"] == {"name": "python"}  # the stub written by `flashcourse build`
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
