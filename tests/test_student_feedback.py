"""What a student's own kernel sees: tests run (no grading flag leaks in), GPU-only checks skip
in CPU mode, failures show one clean message, a CUDA cell that did not compile says so."""
import os
import subprocess
import sys

import tempfile

import pytest

from autograder.instructor.nbtext import ROOT


def _py(code: str, **env) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("NBGRADER_EXECUTION", "FLASHCOURSE_AUTOGRADE")}
    e.update(env, FLASHCOURSE_MODE="cpu", PYTHONPATH=ROOT)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:  # a file: sources readable
        f.write(code)
    try:
        return subprocess.run([sys.executable, f.name], capture_output=True, text=True, env=e, cwd=ROOT,
                              timeout=300)
    finally:
        os.unlink(f.name)


def test_loading_nbgrader_config_sets_no_grading_flag_for_kernels():
    code = ("import os, runpy\n"
            "from traitlets.config import Config\n"
            "c = Config()\n"
            "runpy.run_path('nbgrader_config.py', init_globals={'get_config': lambda: c})\n"
            "import course\n"
            "print('GRADING', course.GRADING)\n"
            "print('leaked', sorted(k for k in os.environ if 'AUTOGRADE' in k or 'NBGRADER' in k))\n")
    r = _py(code)
    assert r.returncode == 0, r.stderr
    assert "GRADING False" in r.stdout and "leaked []" in r.stdout, r.stdout


@pytest.mark.parametrize("value,expected", [("autograde", True), ("validate", False), ("", False)])
def test_grading_is_nbgrader_autograde_signal_only(value, expected):
    r = _py("import course; print(course.GRADING)", NBGRADER_EXECUTION=value)
    assert r.stdout.strip() == str(expected), r.stderr


def test_visible_check_runs_and_gpu_checks_skip_in_cpu_mode():
    code = ("import numpy as np\n"
            "from autograder import check\n"
            "def safe_softmax(x):\n"
            "    e = np.exp(x - x.max(-1, keepdims=True))\n"
            "    return e / e.sum(-1, keepdims=True)\n"
            "check('ch01.safe_softmax', 'correctness', namespace=globals())\n"
            "check('ch01.softmax_triton', 'bandwidth', namespace=globals())\n")
    r = _py(code)
    assert r.returncode == 0, r.stderr
    assert "✓ Safe softmax in NumPy [correctness]" in r.stdout
    assert "[bandwidth]: skipped: needs a GPU" in r.stdout
    assert r.stderr.strip() == "" or "Traceback" not in r.stderr


def test_failure_renders_as_one_clean_message():
    """Under nbgrader's Validate an unsolved exercise is an error, shown as one clean message."""
    code = ("import os\nos.environ['NBGRADER_EXECUTION'] = 'validate'\n"
            "from autograder import check\n"
            "from autograder.notebook import CheckFailed\n"
            "def safe_softmax(x):\n"
            "    raise NotImplementedError()\n"
            "try:\n"
            "    check('ch01.safe_softmax', 'correctness', namespace=globals())\n"
            "except CheckFailed as e:\n"
            "    print('|'.join(e._render_traceback_()))\n")
    r = _py(code)
    assert r.returncode == 0, r.stderr
    first = r.stdout.strip().split("|")[0]
    assert "✗ Safe softmax in NumPy [correctness]: not implemented yet" in first, r.stdout
    assert "Traceback" not in r.stdout and "autograder/" not in r.stdout


def test_an_unsolved_exercise_says_so_in_one_line_while_the_student_works():
    """Outside Validate and grading, the stub does not stop Run All: one line, no error."""
    code = ("from autograder import check\n"
            "def safe_softmax(x):\n"
            "    raise NotImplementedError()\n"
            "check('ch01.safe_softmax', 'correctness', namespace=globals())\n"
            "print('went on')\n")
    r = _py(code)
    assert r.returncode == 0, r.stderr
    assert "– Safe softmax in NumPy [correctness]: not implemented yet" in r.stdout and "went on" in r.stdout


def test_cuda_cell_that_fails_to_compile_is_reported_as_such():
    from course.magic import cell_body, run_cell
    from course.errors import CudaCompileError
    from autograder.declare.submission import MissingName, cells_from_namespace
    ns: dict = {}
    src = cell_body('extern "C" __global__ void k(float* y) {\n    y[0] = undefined_name;\n}\n')
    with pytest.raises(CudaCompileError) as e:
        run_cell(src, ns)
    assert "line 3" in str(e.value), str(e.value)  # the editor's line: %%cuda is line 1
    with pytest.raises(MissingName, match="did not compile"):
        cells_from_namespace(ns, ["k"])


def test_messages_wrap_at_word_boundaries_never_inside_a_word():
    """JupyterLab wraps outputs anywhere (word-break: break-all): the course wraps its messages itself, at spaces,
    so no word (a name, a number, a path) is cut; a word longer than the width stays whole on its line."""
    from autograder.notebook import WIDTH, CheckFailed, wrap
    words = ("max |out - ref| = 3.1e-02 at row 1822, column 780 (row kind: one dominant entry); expected rows to sum "
             "to 1 within 1e-06: row 17 sums to 0.99980 while the reference is 1.00000; tolerance atol=1e-06 "
             "rtol=1e-05 with /a/very/long/path/that/is/one/word/" + "x" * 120 + " end").split()
    text = "Safe softmax in NumPy [hidden]: " + " ".join(words)
    lines = CheckFailed(text)._render_traceback_()
    plain = [ln.replace("\x1b[0;31m", "").replace("\x1b[0m", "") for ln in lines]
    assert len(plain) > 2
    assert " ".join(" ".join(plain).split()) == "✗ " + " ".join(text.split())  # every word whole, in order
    assert all(len(ln) <= WIDTH or " " not in ln.strip() for ln in plain), plain
    assert all(ln.startswith("  ") for ln in plain[1:])  # continuation lines are indented
    assert wrap("short\n\nlines stay") == "short\n\nlines stay"
