"""nbgrader plugins, registered by nbgrader_config.py.

ClearSolutionsCuda: in %%cuda cells a solution region becomes a CUDA stub
    (`NOT_IMPLEMENTED();`), which the %%cuda magic reports as "not implemented yet"
    instead of handing NVRTC a Python `raise`.
IsolatedRegrade: runs after nbgrader executes a submission. For every test cell that
    calls `check(exercise, check)` the judge (this process) runs that check on the
    notebook's own solution cells, executed once in a warm runner process, and writes
    the verdict as the cell's output. The grade never depends on the state of the
    executed notebook, nor on anything the runner says: the judge makes the inputs and
    references and verifies the outputs itself. A crash or hang costs only its checks.
FeedbackExporter, FeedbackPage: nbgrader's own feedback page (`nbgrader generate_feedback`,
    the formgrader's button) through templates/feedback/: every graded cell named,
    long outputs wrapped, MathJax from a copy in feedback/.mathjax, the diagrams embedded.
"""
from __future__ import annotations

import json
import os

import nbformat
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from nbgrader.preprocessors import ClearSolutions, NbGraderPreprocessor
from nbgrader.utils import is_grade
from traitlets import Bool, default

from autograder.instructor import classgrade
from autograder.judge import testcells
from autograder.instructor.feedback import CHECK_NAMES, humanise
from autograder.judge.testcells import check_calls

from autograder.layout import ROOT  # noqa: E402

CUDA_STUB = "// YOUR CODE HERE\nNOT_IMPLEMENTED();"


class ClearSolutionsCuda(ClearSolutions):
    def _replace_solution_region(self, cell, language):
        if cell.cell_type == "code" and cell.source.lstrip().startswith("%%cuda"):
            saved = self.code_stub
            self.code_stub = {**saved, "cuda": CUDA_STUB}
            try:
                return super()._replace_solution_region(cell, "cuda")
            finally:
                self.code_stub = saved
        return super()._replace_solution_region(cell, language)


class IsolatedRegrade(NbGraderPreprocessor):
    """Grade a submission without executing it in nbgrader's process: the judge (this process) runs
    every check() of the test cells on the solution cells, which a sandboxed runner executes once
    (autograder.judge.testcells.grade, as class grading does). It replaces nbgrader's Execute step: under the
    solution cells it writes what they printed (or why they failed) in the runner, under each test cell
    the verdict. A grade cell that is not a check() call cannot be graded without executing it in
    nbgrader's process, so it scores zero with a message saying so (every test cell of this course is a
    check() call). Under `flashcourse collect` (FLASHCOURSE_REPLAY) it grades nothing: it writes the
    verdicts of the result files the judges wrote (replay)."""

    def preprocess(self, nb, resources):
        replaying = os.environ.get("FLASHCOURSE_REPLAY")
        if replaying:  # `flashcourse collect`: the judge graded already (classgrade); record its results
            return replay(nb, resources, replaying)
        from autograder.boundary import sandbox
        from autograder.declare.submission import solution_cells
        ok, why = sandbox.status()
        if not ok:
            self.log.warning("flashcourse: NO SANDBOX around student code: %s", why)
        pairs = solution_cells(nb)
        jobs = {i: check_calls(c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code" and is_grade(c)}

        def said(v):
            self.log.info("%s [%s]: %s (%.1f s)", v.exercise, v.check, "pass" if v.passed else "FAIL", v.seconds)
        graded = testcells.grade([c for _, c in pairs], jobs, on_verdict=said)
        for i, (nb_cell, _) in enumerate(pairs):
            text = graded.printed.get(i, "")
            nb_cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)] if text else []
        for i, v in graded.cells.items():
            _write_verdict(nb.cells[i], v.passed, v.text)
        return nb, resources


def _write_verdict(cell, passed: bool, text: str) -> None:
    """A test cell's verdict as its output: what it printed when it passed, an AssertionError when it failed
    (nbgrader scores a test cell by whether its output holds an error)."""
    cell.outputs = ([nbformat.v4.new_output("stream", name="stdout", text=text)] if passed else
                    [nbformat.v4.new_output("error", ename="AssertionError", evalue=text,
                                            traceback=[f"AssertionError: {text}"])])


def replay(nb, resources: dict, results: str):
    """Fill a submission's cells from its result file: solution cells get what they printed in the runner,
    test cells their verdicts; test cells the student deleted are put back (from the source notebook)
    first, so that nbgrader scores them. Raises if there is no current result."""
    nbg = resources.get("nbgrader", {})
    student, chapter = nbg.get("student"), nbg.get("assignment")
    r = classgrade.read_result(os.path.join(results, f"{student}.json"))
    if r is None:
        raise RuntimeError(f"no result for {student} in {results}: grade first (flashcourse autograde)")
    source = classgrade.source_notebook(_course_of(resources), chapter)
    ids = [c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in nb.cells]
    for k, c in enumerate(source.cells):  # deleted test cells come back where they were
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in r["cells"] and gid not in ids:
            prev = next((source.cells[j].metadata.get("nbgrader", {}).get("grade_id") for j in range(k - 1, -1, -1)
                         if source.cells[j].metadata.get("nbgrader", {}).get("grade_id") in ids), None)
            at = ids.index(prev) + 1 if prev else len(nb.cells)
            nb.cells.insert(at, nbformat.from_dict(json.loads(json.dumps(c))))
            ids.insert(at, gid)
    for c in nb.cells:
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if c.cell_type != "code" or not gid:
            continue
        if gid in r["cells"]:
            _write_verdict(c, r["cells"][gid]["passed"], r["cells"][gid]["text"])
        elif gid in r["solutions"]:
            c.outputs = [nbformat.v4.new_output("stream", name="stdout", text=r["solutions"][gid])]
    return nb, resources


def _course_of(resources: dict) -> str:
    return os.environ.get("FLASHCOURSE_COURSE") or os.getcwd()


# ---------- nbgrader's own feedback page (`nbgrader generate_feedback`, formgrader's "generate feedback") ----------

FEEDBACK_TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
FEEDBACK_TEMPLATE = "flashcourse.html.j2"
MATHJAX_DIR = ".mathjax"  # in the feedback folder, beside the students' folders (a dot: no student id matches it)
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"  # the combined configuration jupyter-server-mathjax ships
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".svg": "image/svg+xml"}


class FeedbackExporter(HTMLExporter):
    """nbgrader's HTMLExporter for feedback, with flashcourse's page (templates/feedback/): it extends
    nbgrader's own feedback template (its scores, comments and late penalty stay), names every graded cell, wraps
    long outputs instead of scrolling them, and loads MathJax from the course's own copy. Registered as
    GenerateFeedback.exporter_class, so nbgrader's other pages (the formgrader) keep the stock HTMLExporter.

    nbgrader names the template `feedback` (the formgrader's button forces that name): nbgrader's folder comes
    first, ours second, so 'index.html.j2' is nbgrader's page, which ours (another file name) extends; our
    mathjax.html.j2 replaces nbconvert's CDN macro."""

    @default("template_file")
    def _flashcourse_template_file(self):
        return FEEDBACK_TEMPLATE

    @default("sanitize_html")
    def _flashcourse_sanitize_html(self):  # a student's HTML (markdown, outputs) runs no script in a reader's browser
        return True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if FEEDBACK_TEMPLATES not in self.extra_template_basedirs:
            self.extra_template_basedirs = [*self.extra_template_basedirs, FEEDBACK_TEMPLATES]
            self.template_paths = self._template_paths()  # computed already, from the folders before ours


def _course_dir(pre, student: str, assignment: str) -> tuple[str, str, str]:
    """(course root, feedback folder, this page's folder) of the GenerateFeedback run a preprocessor belongs to."""
    node = pre
    while node is not None and getattr(node, "coursedir", None) is None:
        node = getattr(node, "parent", None)
    coursedir = getattr(node, "coursedir", None)
    if coursedir is None:  # not under nbgrader: nbgrader runs its converters in the course root
        feedback = os.path.join(os.getcwd(), "feedback")
        return os.getcwd(), feedback, os.path.join(feedback, student, assignment)
    return (coursedir.root, os.path.join(coursedir.root, coursedir.feedback_directory),
            coursedir.format_path(coursedir.feedback_directory, student, assignment))


def install_mathjax(feedback_dir: str) -> str | None:
    """A copy of the MathJax 2 that jupyter-server-mathjax ships, in feedback_dir/.mathjax (made once per
    version, atomically); its folder, or None if the package is missing."""
    try:
        import jupyter_server_mathjax
    except ImportError:
        return None
    import importlib.metadata
    import shutil
    import tempfile
    version = importlib.metadata.version("jupyter-server-mathjax")
    dest = os.path.join(feedback_dir, MATHJAX_DIR)
    stamp = os.path.join(dest, "VERSION")
    try:
        with open(stamp) as f:
            if f.read().strip() == version:
                return dest
    except OSError:
        pass
    src = os.path.join(os.path.dirname(jupyter_server_mathjax.__file__), "static")

    def unused(folder, names):  # what the page never loads: other languages, the SVG output's fonts
        rel = os.path.relpath(folder, src).replace(os.sep, "/")
        out = [n for n in names if n == "__pycache__" or n.endswith(".md")]
        if rel == "localization":
            out += [n for n in names if n != "en"]
        if rel == "jax/output":
            out += [n for n in names if n == "SVG"]
        return out

    os.makedirs(feedback_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".mathjax-", dir=feedback_dir)
    try:
        shutil.copytree(src, os.path.join(tmp, "m"), ignore=unused)
        with open(os.path.join(tmp, "m", "VERSION"), "w") as f:
            f.write(version + "\n")
        for d, dirs, files in os.walk(os.path.join(tmp, "m")):  # readable by the students' web server too
            os.chmod(d, 0o755)
            for name in files:
                os.chmod(os.path.join(d, name), 0o644)
        old = dest + ".old"
        shutil.rmtree(old, ignore_errors=True)
        if os.path.exists(dest):
            os.rename(dest, old)
        os.rename(os.path.join(tmp, "m"), dest)
        shutil.rmtree(old, ignore_errors=True)
    except OSError:
        if not os.path.exists(stamp):  # else another run made the same copy meanwhile
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


class FeedbackPage(Preprocessor):
    """After GetGrades and CSSHTMLHeaderPreprocessor (GenerateFeedback.preprocessors): what flashcourse's
    feedback template needs in resources["flashcourse"]: each graded cell's name and the checks it runs, the
    relative URL of the course's MathJax copy, our CSS; and the chapter's pictures embedded (their relative
    paths lead nowhere from feedback/<student>/<chapter>/)."""

    enabled = Bool(True)  # nbgrader registers its converters' preprocessors as they are

    def preprocess(self, nb, resources):
        assignment = resources.get("nbgrader", {}).get("assignment", "")
        student = resources.get("nbgrader", {}).get("student", "")
        root, feedback_dir, page_dir = _course_dir(self, student, assignment)
        cells = {}
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                self._embed_pictures(cell, [os.path.join(root, "source", assignment),
                                            os.path.join(ROOT, "source", assignment)])
            meta = cell.metadata.get("nbgrader", {})
            gid = meta.get("grade_id")
            if not gid:
                continue
            if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                calls = check_calls(cell.source)
                runs = ", ".join(f"{e} · {CHECK_NAMES.get(k, k)}" for e, k in calls)
                cells[gid] = {"name": humanise(gid), "runs": runs, "kind": "test cell"}
            elif cell.cell_type == "markdown" and meta.get("task"):
                cells[gid] = {"name": humanise(gid), "runs": "", "kind": "task"}
            elif meta.get("grade"):
                kind = "written answer" if cell.cell_type == "markdown" else "graded answer"
                cells[gid] = {"name": humanise(gid), "runs": "", "kind": kind}
        try:
            mathjax = install_mathjax(feedback_dir)
        except OSError as e:  # the page is still written, its math as LaTeX source
            self.log.warning("flashcourse: could not copy MathJax into %s: %s", feedback_dir, e)
            mathjax = None
        url = (os.path.relpath(mathjax, page_dir).replace(os.sep, "/") + f"/MathJax.js?config={MATHJAX_CONFIG}"
               if mathjax else "")
        if mathjax is None:
            self.log.warning("flashcourse: no MathJax copy (is jupyter-server-mathjax installed?): the feedback "
                             "page's math stays LaTeX source")
        with open(os.path.join(FEEDBACK_TEMPLATES, "feedback", "flashcourse.css")) as f:
            resources.setdefault("inlining", {}).setdefault("css", []).append(f.read())
        resources["flashcourse"] = {"cells": cells, "mathjax_url": url}
        return nb, resources

    @staticmethod
    def _embed_pictures(cell, bases):
        """`![alt](../../course/diagrams/x.png)` -> an attachment of the cell (nbconvert writes a data: URL), for
        pictures of the course (under a base's course folder); anything else is left as it is."""
        import base64
        import re

        def embed(m):
            alt, src = m.group(1), m.group(2)
            ext = os.path.splitext(src)[1].lower()
            if ext not in IMAGE_TYPES or "://" in src or src.startswith(("/", "data:", "attachment:")):
                return m.group(0)
            for base in bases:
                path = os.path.normpath(os.path.join(base, src))
                allowed = [os.path.normpath(os.path.join(base, "..", "..", "course")), os.path.normpath(base)]
                if os.path.isfile(path) and any(path.startswith(a + os.sep) for a in allowed):
                    with open(path, "rb") as f:
                        data = base64.b64encode(f.read()).decode("ascii")
                    name = os.path.basename(path)
                    cell.setdefault("attachments", {})[name] = {IMAGE_TYPES[ext]: data}
                    return f"![{alt}](attachment:{name})"
            return m.group(0)

        cell.source = re.sub(r"!\[([^\]]*)\]\(([^)\s]+)\)", embed, cell.source)
