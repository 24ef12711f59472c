# Two commands do all set-up:  `make lab` opens the course, `make test` runs the tests.
# Both create .venv and install into it on first use (idempotent).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml Makefile | cksum | cut -d' ' -f1)
# Where there is no GPU, torch 2.13.0 should be the CPU build. Set TORCH_INDEX to PyTorch's CPU
# wheel index if plain `pip install torch==2.13.0` would fetch the CUDA build on your machine.
TORCH_INDEX ?=
TORCH_ARGS  := $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX) --extra-index-url https://pypi.org/simple)
# `jupyter lab` options for `make lab` / `make formgrader`, e.g. LAB_ARGS="--port=9999 --no-browser".
# lab/serve.sh binds 127.0.0.1 and adds --allow-root as root by itself, unless given other values here.
LAB_ARGS    ?= $(if $(filter 0,$(shell id -u)),--allow-root) --ip=127.0.0.1

.PHONY: lab formgrader test test-browser test-book test-slurm book install gpu-test clean

install: $(STAMP)

# The last step: jupyter-events' jsonschema[format-nongpl] brings rfc3987-syntax, which jsonschema imports whenever
# present; it builds 38 Lark grammars on import, about 2-3 s in every process that imports nbformat (each nbgrader
# run, grading worker and Jupyter server). It only checks "iri" string formats, which nothing here uses.
$(STAMP):
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --no-cache-dir torch==2.13.0 $(TORCH_ARGS)
	$(BIN)/python -m pip install -q --no-cache-dir triton==3.7.1 -e ".[dev]"
	$(BIN)/python -m pip uninstall -y -q rfc3987-syntax
	rm -f $(VENV)/.installed-* && touch $@

# The student view: the student's working copy work/ (gitignored; made on first use, never overwritten:
# lab/workcopy.py) as the server root, chapter 1 opened, nbgrader's Validate button; nbgrader's instructor
# tools off (lab/student/, added through JUPYTER_CONFIG_PATH).
lab: $(STAMP)
	JUPYTER=$(BIN)/jupyter bash lab/serve.sh student $(LAB_ARGS)

# The instructor view: the course root, with nbgrader's formgrader and create-assignment tools.
formgrader: $(STAMP)
	JUPYTER=$(BIN)/jupyter bash lab/serve.sh instructor $(LAB_ARGS)

test: $(STAMP)
	$(BIN)/python -m ruff check .
	$(BIN)/python -m pytest -q -ra --timeout=1200 --durations=25

# A student in a real browser (Debian chromium + Playwright) against `make lab`'s server; also in `make test`.
test-browser: $(STAMP)
	$(BIN)/python -m pytest -q -ra tests/test_browser.py

# The self-study edition: every chapter as a static site in build/book/ (nothing executed; GPU outputs are the
# recorded examples in course/figures/). Installs pyproject's `book` extra into .venv on first use.
book: $(STAMP)
	$(BIN)/python book/build.py

# The book in a real browser (Debian chromium + Playwright, outside hosts blocked); also in `make test`.
test-book: $(STAMP)
	$(BIN)/python -m pytest -q -ra tests/test_book.py

# A class graded as a 2-task Slurm job array on a single-node Slurm on localhost (installs slurm-wlm and
# munge with apt if missing; its own daemons in a temporary directory). Also run by CI after `make test`.
test-slurm: $(STAMP)
	$(BIN)/python -m pytest -q -ra -m slurm tests/test_slurm.py

# On a machine with an NVIDIA GPU: the same tests, bandwidth and CUDA included.
gpu-test: $(STAMP)
	FLASHCOURSE_MODE=gpu bash tests/gpu_run.sh

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
