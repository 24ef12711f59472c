"""JupyterLab config for the student view (lab/serve.sh student puts lab/student/ first on JUPYTER_CONFIG_PATH).

The page says which mode the course runs in: the page config option `flashcourseMode`, "cpu" or "gpu" (in
<script id="jupyter-config-data">, read with PageConfig.getOption). The course's front-end extension
(labextension/src/index.ts, plugin @flashcourse/cuda-cells:validate-note) reads it and, in CPU mode, adds to
nbgrader's Validate success message that the GPU checks were not run.

The mode is course/mode.py's own decision (MODE), not a second copy of it: mode.py is run in a child process
of the server's Python with the server's environment, which is what the notebooks' kernels, Validate's
included, inherit. A child, because mode.py may import torch and initialise CUDA (in auto mode) and switches
the Triton interpreter on in its process's environment; none of that belongs in the server. When mode.py
fails (e.g. FLASHCOURSE_MODE=gpu with no CUDA device) the option is left out, so nothing is added; the
kernels report that error themselves.
"""
import os
import subprocess
import sys

_MODE_PY = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "course", "mode.py")


def course_mode() -> str | None:
    try:
        r = subprocess.run([sys.executable, "-c", "import runpy, sys; print(runpy.run_path(sys.argv[1])['MODE'])",
                            _MODE_PY], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"flashcourse: the course's mode is not known ({e}); Validate adds no CPU-mode note", file=sys.stderr)
        return None
    mode = r.stdout.strip()
    if r.returncode or mode not in ("cpu", "gpu"):
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"flashcourse: the course's mode is not known ({last}); Validate adds no CPU-mode note",
              file=sys.stderr)
        return None
    return mode


c = get_config()  # noqa: F821
_mode = course_mode()
if _mode:
    # LabApp adds its own keys to this dict (setdefault, then update); it does not replace it.
    c.ServerApp.tornado_settings.update({"page_config_data": {"flashcourseMode": _mode}})
