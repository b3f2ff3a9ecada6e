# Set-up and checks for the series. `make lab` to learn, `make check` for the quick
# checks while you work, `make test` to check everything (what CI runs), `make classroom`
# for the teaching editions (build/classroom).
# Every target sets up .venv first; a second run re-installs nothing unless
# requirements.txt or pyproject.toml changed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
READY  := $(VENV)/.installed
LESSON := notebooks/01_backward_and_the_graph.ipynb
LESSON_KO := notebooks/ko/01_backward_and_the_graph.ipynb
SITE   := build/site
CLASSROOM := build/classroom
# nbgrader lives in a venv of its own: its JupyterLab extensions never touch .venv.
NBGRADER_VENV  := .venv-nbgrader
NBGRADER_READY := $(NBGRADER_VENV)/.installed

.PHONY: setup graphviz korean-font chromium npm lab lab-ko check test site classroom nbgrader-env \
        notebooks figures budget stats bench clean FORCE

setup: $(READY) graphviz korean-font

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# --no-build-isolation: build our packages with the pinned setuptools, no download.
# Two of them, both editable: the library (.) and the course's checkers (course/).
$(READY): requirements.txt pyproject.toml course/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e . -e course
	touch $@

# System programs: installed when we are root with apt-get, else a note on how.
graphviz:
	@sh tools/ensure_tool.sh dot graphviz graphviz "the graphs will show as DOT source"
# The Korean lessons' plots, graph drawings and pages draw Hangul with Noto Sans CJK;
# matplotlib's font list, if made before the font came, is made again.
korean-font: $(READY)
	@sh tools/ensure_tool.sh "font:Noto Sans CJK KR" "fonts-noto-cjk fontconfig" font-noto-sans-cjk-kr \
	    "Korean text in plots will show as empty boxes"
	@$(BIN)/python tools/korean_font.py
chromium:
	@sh tools/ensure_tool.sh $${CHROMIUM:-/usr/bin/chromium} chromium chromium \
	    "the browser tests will be skipped (set CHROMIUM to another Chromium's path)"
npm:
	@sh tools/ensure_tool.sh npm npm node "make site cannot fetch MathJax (the site is not built)"

# JupyterLab refuses to run as root unless told; containers and CI machines are root.
AS_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: setup
	$(BIN)/jupyter lab --ip=127.0.0.1 $(AS_ROOT) $(LAB_ARGS) $(LESSON)

# The Korean edition (notebooks/ko, README.ko.md): its lesson 01.
lab-ko: setup
	$(BIN)/jupyter lab --ip=127.0.0.1 $(AS_ROOT) $(LAB_ARGS) $(LESSON_KO)

# pytest on every core (pytest-xdist): each test, or group of tests that must share a
# worker, goes to whichever worker is free, the longest first (conftest.py says which).
# PYTEST_WORKERS=0 runs them in this process, one at a time.
# One torch thread per process where several run side by side (the test workers, their
# kernels and subprocesses; the teacher editions): they share the cores already, and
# torch's own threads would wait on one another (the notebooks took a quarter longer).
# make notebooks keeps torch's default, so the stored outputs are made with it and
# checked with one thread.
ONE_THREAD := env OMP_NUM_THREADS=1
PYTEST_WORKERS ?= auto
PYTEST := $(ONE_THREAD) $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --no-loadscope-reorder

# The quick loop while you work, about a minute: the library's tests, the exercises'
# checkers, notebook hygiene, the Korean edition's sync check. Nothing is run in a
# kernel, a browser or a script subprocess (the explain runner and its real cases: make
# test), and nothing under build/ is read (so nothing needs building).
check: setup
	$(PYTEST) tests -m "not kernel and not browser and not build and not scripts" $(PYTEST_ARGS)

# Everything, as CI runs it. The browser tests (tests/browser) need Chromium and the
# built site; without them they are skipped on a reader's machine and fail under CI.
# The classroom tests need build/classroom and the nbgrader venv (tests/test_classroom*.py).
# It ends with the 15 slowest tests and the wall time of each phase (tools/phases.sh).
PHASE := sh tools/phases.sh run
test:
	@sh tools/phases.sh start
	@$(PHASE) set-up $(MAKE) --no-print-directory setup chromium npm nbgrader-env
	@if command -v npm >/dev/null 2>&1; then $(PHASE) site $(MAKE) --no-print-directory site; fi
	@$(PHASE) classroom $(MAKE) --no-print-directory classroom
	@$(PHASE) pytest $(PYTEST) --durations=15 $(PYTEST_ARGS); \
	    status=$$?; sh tools/phases.sh report; exit $$status

# The static site, build/site/html, from the stored outputs (nothing is re-run). It is
# rebuilt, from scratch, only when one of its inputs changed, or was added or removed
# (build/.site-inputs lists them). MathJax comes from npm. The Korean edition is a
# second build of its own (docs/conf.py with the tag ko), in build/site/html/ko.
SITE_INPUTS := $(sort $(wildcard README.md README.ko.md CONTRIBUTING.md LICENSE \
                                 notebooks/[0-9]*.ipynb notebooks/ko/[0-9]*.ipynb \
                                 figures/* docs/conf.py docs/_static/* docs/_templates/*))
# The teacher's guide, and the decks (slides/) that the site makes from the lessons.
SITE_INPUTS += $(sort $(wildcard docs/guide.md docs/guide.ko.md tools/classroom/slides.py \
                                  tools/classroom/templates/*/*))

site: $(SITE)/.built

build/.site-inputs: FORCE
	@mkdir -p $(@D); echo '$(SITE_INPUTS)' | cmp -s - $@ || echo '$(SITE_INPUTS)' > $@

$(SITE)/.built: build/.site-inputs $(SITE_INPUTS) docs/node_modules/.installed $(READY)
	rm -rf $(SITE)
	$(BIN)/sphinx-build -q -b html -c docs -d $(SITE)/doctrees . $(SITE)/html
	$(BIN)/sphinx-build -q -b html -c docs -t ko -d $(SITE)/doctrees-ko . $(SITE)/html/ko
	@touch $@
	@echo "The site is in $(SITE)/html: open $(SITE)/html/index.html"

FORCE:

# The teaching editions, build/classroom/{student,teacher,nbgrader,slides,guide}, from
# the lessons and their worked solutions, and the Korean ones in build/classroom/ko
# (tools/classroom; the teacher editions are run, about half a minute). Rebuilt only when
# an input changed, was added or removed.
CLASSROOM_INPUTS := $(sort $(wildcard notebooks/[0-9]*.ipynb notebooks/ko/[0-9]*.ipynb \
                                      notebooks/ko/matplotlibrc src/*/*.py src/*/*/*.py \
                                      course/*/*.py tools/classroom/*.py tools/run_notebooks.py \
                                      tools/classroom/templates/*/* docs/guide.md docs/guide.ko.md \
                                      docs/exam.md docs/exam.ko.md))
# The decks need reveal.js and MathJax from npm; without npm there are no slides.
CLASSROOM_NPM := $(if $(shell command -v npm 2>/dev/null),docs/node_modules/.installed)

classroom: $(CLASSROOM)/.built

build/.classroom-inputs: FORCE
	@mkdir -p $(@D); echo '$(CLASSROOM_INPUTS)' | cmp -s - $@ || echo '$(CLASSROOM_INPUTS)' > $@

$(CLASSROOM)/.built: build/.classroom-inputs $(CLASSROOM_INPUTS) $(CLASSROOM_NPM) $(READY)
	@$(MAKE) --no-print-directory graphviz chromium
	rm -rf $(CLASSROOM)
	$(ONE_THREAD) $(BIN)/python -m tools.classroom
	@touch $@

# nbgrader, pinned (requirements-nbgrader.txt), with the lessons' packages, for the
# test that generates, autogrades and exports the lessons as an nbgrader course.
nbgrader-env: $(NBGRADER_READY)

$(NBGRADER_VENV)/bin/python:
	$(PYTHON) -m venv $(NBGRADER_VENV)

$(NBGRADER_READY): requirements-nbgrader.txt pyproject.toml course/pyproject.toml \
                   | $(NBGRADER_VENV)/bin/python
	$(NBGRADER_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(NBGRADER_VENV)/bin/python -m pip install --quiet -r requirements-nbgrader.txt
	$(NBGRADER_VENV)/bin/python -m pip install --quiet --no-deps --no-build-isolation -e . -e course
	touch $@

docs/node_modules/.installed: docs/package.json docs/package-lock.json | npm
	cd docs && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# Re-run every lesson top to bottom in a fresh kernel and store its outputs.
notebooks: setup
	$(BIN)/python tools/run_notebooks.py

figures: setup
	$(BIN)/python tools/make_figures.py

# Each lesson's words, cells, exercises and stated time against the period budget.
stats:
	$(PYTHON) tools/lesson_stats.py

# Benchmarks, not tests: what autograd_lens.explain, memory_timeline and backward_replay
# cost on a training step, and how long the lens takes to read graphs of 100 to 20,000
# nodes next to torchviz's make_dot.
bench: setup
	$(BIN)/python tools/bench_explain.py
	$(BIN)/python tools/bench_memory.py
	$(BIN)/python tools/bench_lens.py

# The lessons' nbval run against its floor (kernel start + imports); see the script.
budget: setup
	$(BIN)/python tools/nbval_budget.py

clean:
	rm -rf $(VENV) $(NBGRADER_VENV) .pytest_cache $(SITE) $(CLASSROOM) test-artifacts docs/node_modules
