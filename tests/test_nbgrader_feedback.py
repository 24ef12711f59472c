"""nbgrader's own feedback page (`nbgrader generate_feedback`, and the formgrader's "generate feedback" button, which
goes through nbgrader's API), as a student would read it, in a headless Chromium that can reach no outside host.

A real course directory (the course's nbgrader_config.py and the chapter's source), one submission graded the
project's way (`flashcourse autograde`: CPU mode here, so timed checks are "not graded"), then nbgrader's command.
The student solved the first exercise and printed one very long line from its cell; the others are left blank.
"""
import os
import re
import shutil
import subprocess
import sys

import nbformat
import pytest

from autograder.instructor import classgrade, feedback, nbtext
from test_classgrade import CH, SOLVED, _cell, _release

with open(os.path.join(nbtext.ROOT, "source", CH, f"{CH}.nb.md"), encoding="utf-8") as _f:
    DIAGRAMS_SHOWN = len(re.findall(r"!\[[^]]*\]\([^)]*diagrams/[a-z_0-9]+\.png\)", _f.read()))  # its pictures

STUDENT = "eve"
LONG_TOKEN = "END-OF-A-VERY-LONG-LINE"
LONG_LINE = "row 17 = nan, expected 0.0012; " * 150 + LONG_TOKEN  # one line of about 4.8k characters
pytestmark = pytest.mark.slow  # about 45 s: a real autograde, two nbgrader runs, a browser
MATHJAX_ALLOWED = {"about:blank"}  # MathJax 2 times its font loading with a font at about:blank: fails by design


def _run(args, cwd):
    r = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("nbgrader-feedback") / "course")
    os.makedirs(root)
    shutil.copy(os.path.join(nbtext.ROOT, "nbgrader_config.py"), root)
    shutil.copytree(os.path.join(nbtext.ROOT, "source", CH), os.path.join(root, "source", CH),
                    ignore=shutil.ignore_patterns("*.nb.md"))
    nb = _release()
    c = _cell(nb, "safe_softmax")
    c.source = (f"print({LONG_LINE!r})\n"
                + c.source.replace("# YOUR CODE HERE\n    raise NotImplementedError()", SOLVED))
    os.makedirs(os.path.join(root, "submitted", STUDENT, CH))
    nbformat.write(nb, os.path.join(root, "submitted", STUDENT, CH, f"{CH}.ipynb"))
    _run([sys.executable, "-m", "autograder.instructor.cli", "autograde", CH, "--course-dir", root, "--jobs", "1"],
         cwd=root)
    # nbgrader's own command, in the course directory, as an instructor types it
    _run([sys.executable, "-m", "nbgrader", "generate_feedback", CH], cwd=root)
    page = os.path.join(root, "feedback", STUDENT, CH, f"{CH}.html")
    with open(page, encoding="utf-8") as f:
        cli_html = f.read()
    # the formgrader's button: NbGraderAPI.generate_feedback (it forces HTMLExporter.template_name = 'feedback')
    _run([sys.executable, "-c",
          "import json, sys\n"
          "from nbgrader.apps import NbGrader\n"
          "from nbgrader.apps.api import NbGraderAPI\n"
          "from nbgrader.auth import Authenticator\n"
          "app = NbGrader()\napp.initialize([])\n"
          f"r = NbGraderAPI(app.coursedir, Authenticator(parent=app), parent=app).generate_feedback({CH!r}, "
          f"{STUDENT!r})\n"
          "assert r['success'], r\n"], cwd=root)
    with open(page, encoding="utf-8") as f:
        api_html = f.read()
    return {"root": root, "page": page, "cli": cli_html, "api": api_html}


def _gradebook_score(root) -> tuple[float, float]:
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{os.path.join(root, 'gradebook.db')}") as gb:
        s = gb.find_submission(CH, STUDENT)
        return s.score, s.max_score


def test_every_test_cell_is_named_and_nbgrader_scores_stay(course):
    test_cells = classgrade.grade_cells(classgrade.source_notebook(course["root"], CH))
    assert len(test_cells) == 8
    score, max_score = _gradebook_score(course["root"])
    assert score == 4 and max_score == 20  # safe_softmax's two test cells (CPU or GPU alike)
    for html in (course["cli"], course["api"]):
        assert f"Score: {score:g} / {max_score:g}" in html
        srcs = re.findall(r'\bsrc="([^"]*)"', html)  # what the page loads: the embedded pictures and our MathJax
        assert "cdnjs" not in html and all(u.startswith(("data:image/", "../../.mathjax/MathJax.js?")) for u in srcs)
        assert "url(http" not in html
        assert "Test cell</a>" not in html  # nbgrader's nameless list
        for gid, cell in test_cells.items():
            row = html.split(f'<a href="#{gid}">', 1)[1].split("</tr>", 1)[0]  # the summary's row
            assert row.startswith(feedback.humanise(gid) + "</a>") and f"<code>{gid}</code>" in row, row
            exercise, check = cell["calls"][0]
            assert f"{exercise} · {feedback.CHECK_NAMES[check]}" in row, row
            assert f'id="{gid}"' in html  # the cell's own heading, where the link goes
        assert "No response." in html  # nbgrader's comment on the solution cells left as released
        assert html.count("data:image/png;base64,") == DIAGRAMS_SHOWN >= 3  # the chapter's diagrams, embedded


def test_the_page_reads_offline_in_chromium(course, offline_chromium):
    page = offline_chromium.new_page()
    page.set_viewport_size({"width": 900, "height": 800})
    response = page.goto("file://" + course["page"], wait_until="load")
    assert response is None or response.ok
    page.wait_for_function("() => window.MathJax && window.MathJax.Hub", timeout=30_000)
    facts = page.evaluate("""async () => {
      await new Promise(done => MathJax.Hub.Queue(() => done()));  // MathJax 2: startup and typesetting done
      const text = e => { const c = e.cloneNode(true); c.querySelectorAll('code, pre, script').forEach(x => x.remove());
                          return c.textContent; };
      const boxes = [...document.querySelectorAll('pre, div.output_subarea, div.output_area, div.input_area')];
      const long = [...document.querySelectorAll('pre')].find(e => e.textContent.includes('%s'));
      return {
        rendered: document.querySelectorAll('.MathJax, .MathJax_Display').length,
        errors: document.querySelectorAll('.MathJax_Error, .merror').length,
        raw: [...document.querySelectorAll('.text_cell_render')].map(text)
               .flatMap(t => t.match(/\\$[^$\\n]{1,80}\\$/g) || []),
        scrolled: boxes.filter(e => e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1)
                       .map(e => e.className + ': ' + e.textContent.slice(0, 60)),
        long: long ? {wrap: getComputedStyle(long).whiteSpace, lines: Math.round(long.clientHeight /
                      parseFloat(getComputedStyle(long).lineHeight)), width: long.getBoundingClientRect().right}
                   : null,
        wide: document.documentElement.scrollWidth > window.innerWidth,
        images: [...document.images].map(i => [i.complete, i.naturalWidth, i.src.slice(0, 22)]),
        toc: [...document.querySelectorAll('.fc-toc a[href^="#"]')].map(a => a.textContent),
      };
    }""" % LONG_TOKEN)
    assert facts["rendered"] > 20 and not facts["errors"], facts  # the chapter's math, typeset
    assert not facts["raw"], f"LaTeX left as source: {facts['raw'][:5]}"
    assert not facts["scrolled"] and not facts["wide"], f"text behind a scrollbar: {facts['scrolled'][:5]}"
    assert facts["long"] and facts["long"]["wrap"] == "pre-wrap" and facts["long"]["lines"] > 10, facts["long"]
    assert facts["long"]["width"] <= 900, facts["long"]
    assert len(facts["images"]) == DIAGRAMS_SHOWN and all(c and w > 0 and s.startswith("data:image/png")
                                              for c, w, s in facts["images"]), facts["images"]
    assert "Safe softmax (hidden tests)" in facts["toc"] and "Softmax CUDA (bandwidth)" in facts["toc"]
    local = [u for u in offline_chromium.requests if u.startswith(("file://", "data:"))]
    outside = [u for u in offline_chromium.requests if u not in local and u not in MATHJAX_ALLOWED]
    assert not outside, outside
    assert any("/feedback/.mathjax/MathJax.js" in u for u in local), local[:5]
    # each failed request is in problems on its own; the console's copy says no more
    problems = [p for p in offline_chromium.problems
                if "about:blank" not in p and "Failed to load resource" not in p]
    assert not problems, problems
