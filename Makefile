# Set-up and checks for the series. `make lab` to learn, `make test` to check.
# Every target sets up .venv first; a second run re-installs nothing unless
# requirements.txt or pyproject.toml changed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
READY  := $(VENV)/.installed
LESSON := notebooks/01_backward_and_the_graph.ipynb

.PHONY: setup graphviz lab test notebooks figures clean

setup: $(READY) graphviz

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# --no-build-isolation: build our package with the pinned setuptools, no download.
$(READY): requirements.txt pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

graphviz:
	@sh tools/ensure_graphviz.sh

lab: setup
	$(BIN)/jupyter lab --ip=127.0.0.1 $(LAB_ARGS) $(LESSON)

test: setup
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Re-run every lesson top to bottom in a fresh kernel and store its outputs.
notebooks: setup
	$(BIN)/python tools/run_notebooks.py

figures: setup
	$(BIN)/python tools/make_figures.py

clean:
	rm -rf $(VENV) .pytest_cache
