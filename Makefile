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
LAB_ARGS    ?= $(if $(filter 0,$(shell id -u)),--allow-root) --ip=127.0.0.1

.PHONY: lab test install gpu-test clean

install: $(STAMP)

$(STAMP):
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q torch==2.13.0 $(TORCH_ARGS)
	$(BIN)/python -m pip install -q triton==3.7.1 -e ".[dev]"
	rm -f $(VENV)/.installed-* && touch $@

lab: $(STAMP)
	$(BIN)/jupyter lab $(LAB_ARGS) release/ch01_softmax/ch01_softmax.ipynb

test: $(STAMP)
	$(BIN)/python -m ruff check .
	$(BIN)/python -m pytest -q -ra --timeout=1200

# On a machine with an NVIDIA GPU: the same tests, bandwidth and CUDA included.
gpu-test: $(STAMP)
	FLASHCOURSE_MODE=gpu bash tests/gpu_run.sh

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
