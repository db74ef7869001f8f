# Attention, step by step: every command a learner or an instructor needs.
# The first target that needs Python creates .venv and installs requirements.lock into it;
# later targets reuse it until requirements.lock or pyproject.toml changes.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# The Python versions the course supports (pyproject.toml's classifiers; `make compat` runs each).
SUPPORTED_PYTHONS := 3.11 3.12
PYTHON ?= $(shell command -v python3.11 || command -v python3.12 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000
BROWSER_BIN ?= chromium

# Lessons run offline and reproducibly; the kernel's debugger warning would pollute outputs.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1
export PYTHONHASHSEED := 0
# Headless Chromium for the site test.
export COURSE_BROWSER := $(BROWSER_BIN)

# The unit tests are spread over the CPU's cores, each worker taking the next test when it is free
# (worksteal: the slowest tests do not queue behind one worker); OpenMP's waiting threads sleep
# (OMP_WAIT_POLICY=PASSIVE, as for the lessons below), or two workers' torch threads spin against
# each other on two cores.
UNIT := tests --ignore=tests/site -n auto --dist worksteal
UNIT_PYTEST := OMP_WAIT_POLICY=PASSIVE $(BIN)/pytest
# The site's checks, one Chromium per worker; a page's tests share a worker, which opens the page once
# for all of them (--dist loadgroup: the scheduler of tests/site/conftest.py); the reader measures
# (timings, screenshots) are `make measure`, run alone so that nothing competes with the timings.
SITE := tests/site -m "not measure" -n auto --dist loadgroup
# The lessons run two at a time, each in its own kernel, the last (the longest) first: lessons 07
# and 08 train on one thread, so a lesson alone leaves a core idle most of the time (measured: 3 min
# 27 s one at a time, 2 min 37 s two at a time). OpenMP's waiting threads sleep instead of spinning
# (OMP_WAIT_POLICY=PASSIVE), or a lesson's two-thread cells crawl while the other kernel holds a core
# (lesson 07: 33 s alone, 176 s beside lesson 08 without it). Only waiting changes: the same bits.
# Numbers may differ by one unit in their last printed digit (course_utils.authoring.nbval_tolerance):
# on another processor a value on a rounding boundary falls the other side of it. A run that prints
# nothing for 15 minutes (no cell runs that long: nbval stops one at 10) is hung, not slow; the
# watchdog kills it and runs it once more (course_utils.authoring.watchdog; CI once lost its 90 minutes
# to a hung nbval worker). A kernel that dies at start (two start at once, and one's port is taken
# before it binds it) is started again, up to four starts in all, its stderr shown if the last try fails;
# the summary counts the retries (course_utils.authoring.kernel_retry).
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg --nbval-cell-timeout=600 \
	-p course_utils.authoring.nbval_tolerance -p course_utils.authoring.kernel_retry
LESSONS_NBVAL := OMP_WAIT_POLICY=PASSIVE $(BIN)/python -m course_utils.authoring.watchdog -- $(BIN)/pytest $(NBVAL) -n 2 --dist loadfile $(shell ls -r lessons/*.ipynb)
BOOK := $(BIN)/jupyter-book build . --builder html -W --keep-going

.PHONY: help install minutes assets study pilot book lessons validated-cache portability new-lesson handouts pdf test unit notebooks site measure browser compat lab serve bench lock clean lint

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/\$$(PORT)/$(PORT)/g' | awk -F':.*## ' '{printf "  make %-9s %s\n", $$1, $$2}'

# An environment already there (an earlier install, or a .venv linked to one shared by several clones)
# is taken as it is when it holds every version of the lock (envcheck.py, standard library only):
# nothing is reinstalled or upgraded. Its course_utils is pointed at this checkout if it came from
# another, as the authoring tools refuse to act on one checkout with another's code.
$(STAMP): requirements.lock pyproject.toml
	@python=$$(test -x $(BIN)/python && echo "$(BIN)/python" || echo "$(PYTHON)"); \
	version=$$("$$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || version=none; \
	case " $(SUPPORTED_PYTHONS) " in *" $$version "*) ;; *) \
	  echo "error: '$$python' is Python $$version, and the course supports Python $(SUPPORTED_PYTHONS):" \
	       "install one of them, or name it: make PYTHON=/path/to/python3.11"; exit 1;; esac
	@test -x $(BIN)/python || { echo "creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	@$(BIN)/python src/course_utils/authoring/envcheck.py requirements.lock || { \
	  $(BIN)/python -m pip install --quiet --upgrade pip && \
	  $(BIN)/python -m pip install --quiet -r requirements.lock; }
	@here="$$(pwd -P)/src/course_utils"; \
	there=$$($(BIN)/python -c 'import importlib.util as u, os; s = u.find_spec("course_utils"); print(os.path.dirname(os.path.realpath(s.origin)) if s and s.origin else "")'); \
	if [ "$$there" != "$$here" ]; then \
	  if [ -n "$$there" ]; then echo "course_utils of $(VENV) came from $$there: installing this checkout's instead"; fi; \
	  $(BIN)/python -m pip install --quiet --no-deps -e .; fi
	$(BIN)/python -m course_utils.book fetch-assets  # the site's partial plotly.js, from the npm registry
	@touch $@

install: $(STAMP)  ## create .venv with the pinned stack (done automatically by the other targets)

# jupyter-cache keys executed lessons on their code only: when course_utils changes, the book's own
# extension (course_utils.book) drops the cache and the parsed pages, so the lessons run again. It
# does so for any build, `jupyter-book build .` included; nothing here has to.
EXEC_CACHE := _build/.jupyter_cache

book: $(STAMP)  ## execute the lessons (cached) and build the site into _build/html, warnings as errors
	$(BOOK)

# The rebuild in two halves (issue 58): what the lessons load, then lesson 07's study on it. Both at
# once (more jobs side by side): python -m course_utils.authoring.assets, with no target.
assets: $(STAMP)  ## retrain what the lessons load: tokenizer, teacher, bundled student, lesson 08's runs (about 29 min on 2 cores)
	$(BIN)/python -m course_utils.authoring.assets --target assets

study: $(STAMP)  ## rerun lesson 07's study on the bundled teacher and student, into assets/report.json (within 90 min on 2 cores)
	$(BIN)/python -m course_utils.authoring.assets --target study

# Issue 58's teacher pilot, declared in models.py (PILOT_*): the six-layer teacher against the three-layer
# model on the validation split only; resumable job by job (the models it pre-trains stay in _build/pilot).
pilot: $(STAMP)  ## issue 58's teacher pilot on the validation split: src/course_utils/pilots/teacher_pilot.json (resumable; 2 to 5.5 h on 2 cores)
	$(BIN)/python -m course_utils.authoring.pilot

lessons: $(STAMP)  ## re-execute every lesson offline and rewrite its committed .ipynb (with outputs)
	$(BIN)/python -m course_utils.authoring.lessons execute $(LESSONS_FLAGS)

# NAME and TITLE reach the scaffold through the environment, unexpanded ($(value ...), `:=`), never
# through the shell's quoting: a title with `backquotes`, "quotes" or $5 arrives as typed.
new-lesson: export LESSON_NAME := $(value NAME)
new-lesson: export LESSON_TITLE := $(value TITLE)
new-lesson: $(STAMP)  ## NAME=my_topic [TITLE='My topic']: scaffold lessons/NN_my_topic.md from the template, add it to _toc.yml, execute it
	@test -n "$$LESSON_NAME" || { echo "usage: make new-lesson NAME=my_topic [TITLE='My topic'] [SCAFFOLD_FLAGS=--dry-run]"; exit 2; }
	$(BIN)/python -m course_utils.authoring.scaffold --from-environment $(SCAFFOLD_FLAGS)

handouts: $(STAMP)  ## write _build/handouts/NN_name.ipynb: each lesson's notebook without its solutions, to assign
	$(BIN)/python -m course_utils.authoring.handouts

# The PDF: a single-page build (the lessons' execution cache reused), printed by headless Chromium.
# `make book` after it links the PDF from every page's download menu.
pdf: $(STAMP) browser  ## write _build/pdf/attention-step-by-step.pdf (single-page build printed by Chromium); before `make book` to link it
	$(BIN)/jupyter-book build . --builder singlehtml -W --keep-going
	$(BIN)/python -m course_utils.authoring.pdf

validated-cache: $(STAMP)  # after nbval only: the book reads the validated .ipynb, not a second run
	$(BIN)/python -m course_utils.authoring.lessons cache $(EXEC_CACHE)

unit: $(STAMP)  ## unit, pairing, Colab and lock tests (fast)
	$(UNIT_PYTEST) $(UNIT)

notebooks: $(STAMP)  ## nbval, strict: every committed lesson output must match a fresh run
	$(LESSONS_NBVAL)

site: $(STAMP) browser  ## open every page of _build/html in headless Chromium (run `make book` first)
	$(BIN)/pytest $(SITE)

measure: $(STAMP) browser  ## the reader measures of _build/html: first paint on a slowed CPU, screenshots, measures.md (after `make book`)
	$(BIN)/pytest tests/site -m measure

# The committed outputs on other processors' kernels: what each kernel setting changes (torch's
# portable kernels, AVX2 on an AVX-512 machine, MKL's compatible path), then nbval strict on every
# lesson under the portable setting and, on an AVX-512 machine, the AVX2 one. `.ci/run` runs it.
portability: $(STAMP)  ## nbval strict on every lesson under other processors' CPU kernels (portable; AVX2)
	$(BIN)/python -m course_utils.authoring.kernels

lint: $(STAMP)  ## ruff on the package and the tests (configuration in pyproject.toml)
	$(BIN)/ruff check src tests

# The lessons run once: nbval checks that each committed .ipynb is what a fresh run gives, then
# the book's execution cache takes those notebooks, and the PDF and the site are built from them.
# Each stage is timed (course_utils.authoring.stages) and the last line is their table beside the
# budgets of the 2-core machine (the instructor guide's "Where the time goes").
STAGE := $(BIN)/python -m course_utils.authoring.stages

test: $(STAMP) browser  ## the lint, unit tests, nbval, the PDF, the strict book build, the site and PDF tests; ends with each stage's time
	@$(STAGE) reset
	$(STAGE) run lint -- $(BIN)/ruff check src tests
	$(STAGE) run unit -- env $(UNIT_PYTEST) $(UNIT)
	$(STAGE) run notebooks -- env $(LESSONS_NBVAL)
	$(STAGE) run validated-cache -- $(MAKE) --no-print-directory validated-cache
	$(STAGE) run pdf -- $(MAKE) --no-print-directory pdf
	$(STAGE) run book -- $(MAKE) --no-print-directory book
	$(STAGE) run site -- $(BIN)/pytest $(SITE)
	@$(STAGE) summary

browser: $(STAMP)  ## find headless Chromium, or install it (apt-get; without apt, Playwright's own)
	$(BIN)/python -m course_utils.authoring.browser

compat: $(STAMP)  ## run every lesson under each supported package stack (STACKS="floor colab newest"; throw-away venvs)
	$(BIN)/python -m course_utils.authoring.compat $(STACKS)

lab: $(STAMP)  ## open JupyterLab on lessons/
	$(BIN)/jupyter lab --notebook-dir=lessons $$([ "$$(id -u)" = 0 ] && echo --allow-root)

serve:  ## preview the built site on http://127.0.0.1:$(PORT)
	@test -f _build/html/index.html || { echo "no site yet: run 'make book' first"; exit 1; }
	$(BIN)/python -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

minutes: $(STAMP)  ## each lesson's main path by the content time model (prose, code, output, figures, exercises) and its machinery share
	$(BIN)/python -m course_utils.authoring.minutes

bench: $(STAMP)  ## time each lesson's execution and a clean and a cached book build
	$(BIN)/python -m course_utils.authoring.bench

lock:  ## re-resolve requirements.in into requirements.lock, and mirror it into environment.yml
	rm -rf /tmp/course-lock-venv && $(PYTHON) -m venv /tmp/course-lock-venv
	/tmp/course-lock-venv/bin/python -m pip install --quiet --upgrade pip
	/tmp/course-lock-venv/bin/python -m pip install --quiet -r requirements.in
	{ echo "# GENERATED by \`make lock\` from requirements.in: the exact versions the course is tested with."; \
	  echo "# Install with: pip install -r requirements.lock   (make does this into .venv)"; \
	  /tmp/course-lock-venv/bin/python -m pip freeze --exclude-editable | sed 's/^torch==\(.*\)+cpu$$/torch==\1/'; } > requirements.lock
	$(BIN)/python -m course_utils.authoring.lockfile

clean:  ## remove the built site and caches (keeps .venv)
	rm -rf _build .pytest_cache .hypothesis
