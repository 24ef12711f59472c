#!/usr/bin/env bash
# Serve the course in JupyterLab; `make lab` and `make formgrader` run this, and so does
# tests/test_browser.py (on a copy of the course), so all three start the same server.
#
#   lab/serve.sh student    [jupyter lab options]   # what a student sees: their working copy, chapter 1
#                                                   # opened, nbgrader's Validate button, no instructor tools
#   lab/serve.sh instructor [jupyter lab options]   # the course root, with nbgrader's formgrader and
#                                                   # create-assignment tools
#
# Student: the server root is the student's working copy, work/ in the course root (gitignored;
# FLASHCOURSE_WORK=DIR puts it elsewhere, a relative DIR counting from the course root). lab/workcopy.py
# makes it before the server starts: each chapter's release/CH/CH.ipynb copied to work/CH/CH.ipynb when it
# is not there yet, never overwritten (one line on the terminal when the release has changed since), and the
# files the chapters link to (the glossary, the diagrams) in work/course/. So nothing tracked is ever saved
# into, and a notebook opens unmodified (see workcopy.py). The server runs in work/: nbgrader's Validate
# needs no course configuration (nbgrader_config.py configures generate, autograde and feedback only).
# Instructor: the server root is the course root (the directory above this script), where nbgrader finds
# nbgrader_config.py (it reads it from the server's working directory).
# Configuration comes from directories put first on JUPYTER_CONFIG_PATH; nothing global is edited (a
# user's own ~/.jupyter still has the last word, as Jupyter's order goes):
#   lab/common/   both views: jupyter_server_config.py (saving an untouched notebook leaves its file
#                 unchanged: see there), labconfig/page_config.json (no Jupyter news pop-up)
#   lab/student/  student view: labconfig/page_config.json disables nbgrader's instructor front-end
#                 plugins (formgrader, create-assignment, assignment/course lists, Nbgrader menu);
#                 jupyter_server_config.d/ disables the matching server extensions. Validate stays.
#                 jupyter_lab_config.py puts the course's mode (course/mode.py's decision, made in a child
#                 process with this environment, the kernels') into the page config: in CPU mode the
#                 course's extension adds to Validate's success that the GPU checks were not run.
# Options given here come last (e.g. --port=8899 --no-browser --IdentityProvider.token=...).
# JUPYTER=path/to/jupyter picks the installation (default: .venv/bin/jupyter, else jupyter on PATH); the
# working copy is made by the Python beside it (else python3).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-student}"
[ $# -gt 0 ] && shift
jupyter="${JUPYTER:-}"
if [ -z "$jupyter" ]; then
    if [ -x "$root/.venv/bin/jupyter" ]; then jupyter="$root/.venv/bin/jupyter"; else jupyter=jupyter; fi
fi
# nbgrader runs `alembic` from PATH when it opens the gradebook; kernels get the same PATH.
case "$jupyter" in */*) export PATH="$(cd "$(dirname "$jupyter")" && pwd):$PATH" ;; esac
args=(lab)
# Defaults that the options given may already hold (traitlets refuses two --ip): 127.0.0.1 only,
# and --allow-root when run as root.
case " $* " in *" --ip="*|*" --ServerApp.ip="*) ;; *) args+=(--ip=127.0.0.1) ;; esac
case " $* " in *" --allow-root "*) ;; *) [ "$(id -u)" = 0 ] && args+=(--allow-root) ;; esac
# The course's own front-end extension (%%cuda cells highlighted as C++; the CPU-mode note on Validate),
# prebuilt in the repository.
[ -f "$root/course/labextension/@flashcourse/cuda-cells/package.json" ] \
    && args+=("--LabApp.extra_labextensions_path=$root/course/labextension")
config_path="$root/lab/common"
case "$mode" in
    student)
        work="${FLASHCOURSE_WORK:-work}"
        case "$work" in /*) ;; *) work="$root/$work" ;; esac
        python="$(dirname "$jupyter")/python"
        case "$jupyter" in */*) [ -x "$python" ] || python=python3 ;; *) python=python3 ;; esac
        (cd "$root" && "$python" "$root/lab/workcopy.py" "$root" "$work")
        serve="$(cd "$work" && pwd)"
        config_path="$root/lab/student:$config_path"
        args+=("--ServerApp.root_dir=$serve" --LabApp.default_url=/lab/tree/ch01_softmax/ch01_softmax.ipynb) ;;
    instructor)
        serve="$root"
        args+=("--ServerApp.root_dir=$serve" "--LabApp.default_url=/lab?formgrader=true") ;;
    *)
        echo "usage: $0 student|instructor [jupyter lab options]" >&2; exit 2 ;;
esac
export JUPYTER_CONFIG_PATH="$config_path${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"
cd "$serve"
exec "$jupyter" "${args[@]}" "$@"
