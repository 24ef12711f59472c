#!/usr/bin/env bash
# Serve the course in JupyterLab; `make lab` and `make formgrader` run this, and so does
# tests/test_browser.py (on a copy of the course), so all three start the same server.
#
#   lab/serve.sh student    [jupyter lab options]   # what a student sees: chapter 1 opened,
#                                                   # nbgrader's Validate button, no instructor tools
#   lab/serve.sh instructor [jupyter lab options]   # nbgrader's formgrader and create-assignment too
#
# The server root is the course root (the directory above this script), so every chapter under
# release/ is reachable and nbgrader finds nbgrader_config.py there (it reads it from the server's
# working directory). Configuration comes from directories put first on JUPYTER_CONFIG_PATH; nothing
# global is edited (a user's own ~/.jupyter still has the last word, as Jupyter's order goes):
#   lab/common/   both views: jupyter_server_config.py (saving an untouched notebook leaves its file
#                 unchanged: see there), labconfig/page_config.json (no Jupyter news pop-up)
#   lab/student/  student view: labconfig/page_config.json disables nbgrader's instructor front-end
#                 plugins (formgrader, create-assignment, assignment/course lists, Nbgrader menu);
#                 jupyter_server_config.d/ disables the matching server extensions. Validate stays.
# Options given here come last (e.g. --port=8899 --no-browser --IdentityProvider.token=...).
# JUPYTER=path/to/jupyter picks the installation (default: .venv/bin/jupyter, else jupyter on PATH).
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
args=(lab "--ServerApp.root_dir=$root")
# Defaults that the options given may already hold (traitlets refuses two --ip): 127.0.0.1 only,
# and --allow-root when run as root.
case " $* " in *" --ip="*|*" --ServerApp.ip="*) ;; *) args+=(--ip=127.0.0.1) ;; esac
case " $* " in *" --allow-root "*) ;; *) [ "$(id -u)" = 0 ] && args+=(--allow-root) ;; esac
# The course's own front-end extension (%%cuda cells highlighted as C++), prebuilt in the repository.
[ -f "$root/course/labextension/@flashcourse/cuda-cells/package.json" ] \
    && args+=("--LabApp.extra_labextensions_path=$root/course/labextension")
config_path="$root/lab/common"
case "$mode" in
    student)
        config_path="$root/lab/student:$config_path"
        args+=(--LabApp.default_url=/lab/tree/release/ch01_softmax/ch01_softmax.ipynb) ;;
    instructor)
        args+=("--LabApp.default_url=/lab?formgrader=true") ;;
    *)
        echo "usage: $0 student|instructor [jupyter lab options]" >&2; exit 2 ;;
esac
export JUPYTER_CONFIG_PATH="$config_path${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"
cd "$root"
exec "$jupyter" "${args[@]}" "$@"
