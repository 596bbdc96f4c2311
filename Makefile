# tpu-serving developer entry points. Each target makes .venv on first use.
PY      ?= python3
VENV    := .venv
PYTHON  := $(VENV)/bin/python
TOOL    := $(VENV)/bin/tpu-serving
STACK   ?= llama31-405b-v6e16
STACKS  := $(patsubst stacks/Pulumi.%.yaml,%,$(wildcard stacks/Pulumi.*.yaml))

POLICY_VENV := policy/.venv
SCAN_VENV   := .scan-venv
DOCS_VENV   := .docs-venv

BASE    ?= origin/main

# Bytecode, pytest's rewritten test modules included, is cached under build/pycache, out of the tree, whatever the
# shell says: with PYTHONDONTWRITEBYTECODE set, every run compiled and rewrote all 150 test modules again (about 9 s
# of each pytest worker's collection; 2 s with the cache, measured on collection of the fast suite).
export PYTHONPYCACHEPREFIX := $(CURDIR)/build/pycache
unexport PYTHONDONTWRITEBYTECODE

# The reference folder the tests and tools read (default ../shared/reference, or .reference in a checkout with no
# ../shared beside it): REFERENCE_DIR=<dir> on any target's
# command line sets $$TPU_SERVING_REFERENCE, which tests/conftest.py, tools/reference/schema.py and make reference honour.
REFERENCE_DIR ?=
ifneq ($(REFERENCE_DIR),)
export TPU_SERVING_REFERENCE := $(abspath $(REFERENCE_DIR))
endif
# A checkout that cannot have the seeds' manifests (a fork): WITHOUT_SEEDS=1 skips the tests that read them, each
# saying so (tests/conftest.py, missing_seeds); CI never sets it.
WITHOUT_SEEDS ?=
ifneq ($(WITHOUT_SEEDS),)
export TPU_SERVING_WITHOUT_SEEDS := 1
endif

.PHONY: help reference reference-check venv venv-runtime policy-venv scan-venv docs-venv preview previews policy check runbook scan scan-readme diff lint test test-slow bench golden golden-review messages mutate readme docs e2e-tools e2e clean

help:
	@echo "make venv                   the developer environment in $(VENV) (every target installs it when it needs it; make venv-runtime: the program's own, enough for preview and check)"
	@echo "make preview STACK=<stack>  offline preview: build/<stack>/plan.json and manifests.yaml"
	@echo "make previews               offline preview of every stack"
	@echo "make reference [REFERENCE_DIR=<dir>]  fetch the missing reference files the tests read (Go module proxy, GitHub) into ../shared/reference (no ../shared: .reference) and check each by sha256; names the seed manifests it cannot fetch"
	@echo "make reference-check        check the reference folder's files by sha256, fetching nothing"
	@echo "make test                   the fast suite, in parallel (pytest-xdist); CI runs it after make lint"
	@echo "make test-slow              the slow tests (marker slow: CLI, wheel, bench, git clone); CI runs them as a step of their own"
	@echo "make e2e [E2E_STACKS=<s>] [E2E_JOBS=<n>]  the e2e tests (marker e2e), then pulumi up, verify, second preview and destroy of each stack against a real control plane (root)"
	@echo "make lint                   ruff (lint and format check) over the tree, mypy strict over components, tools and policy, and no function above radon grade C"
	@echo "make policy                 the policy rules over every stack's plan (fails on mandatory violations)"
	@echo "make check [STACK='<s> ...']  the runtime model over every stack (or the stacks named): scheduling, network, identity, prerequisites"
	@echo "make runbook STACK=<stack> [WORKLOAD=<ns>/<name>]  the runbooks' commands (node upgrades, host maintenance, a lost VM, a zone outage) in the stack's own names"
	@echo "make scan                   Checkov over every stack (manifests, pod templates, GCP resources) against the reviewed baseline"
	@echo "make diff BASE=<ref> [STACK=<stack>]  Markdown preview diff against a git ref, with recreate warnings"
	@echo "make diff MOVE=<stack> TO=\"<platform> <model>\"  the move of a self-contained stack to a platform and a model stack: state moves, diffs; fails on a cluster or pool replaced, or a GCP name created twice"
	@echo "make bench STACK=<stack>    preview time against the import time of the modules it uses"
	@echo "make readme                 regenerate the docs' generated parts from the code: settings and components reference, cost table, the stacks make e2e runs, make check's output"
	@echo "make docs                   the documentation site (MkDocs, strict: a broken link fails) into build/site; CI builds it"
	@echo "make golden                 rewrite tests/golden from the current program; prints the resources and fields it changed"
	@echo "make mutate [MUTANTS=<glob>|SAMPLE=<n>]  mutation testing of components/ (mutmut); fails under a 90% kill ratio"
	@echo "make messages               record the library's error messages the suite creates into tests/golden_messages.txt (the suite fails on one not listed)"
	@echo "make golden-review [GOLDEN_BASE=<ref>] [VERBOSE=1]  the golden plans' changes against a git ref (default main, else origin/main), and those not yet listed in tests/golden_changes.txt (VERBOSE=1: also each listed one unchanged)"
	@echo "make e2e-tools              build the e2e test's pinned Go tools (Kubernetes, etcd, kwok, JobSet, Pulumi CLI and provider, kustomize, promtool, test-adapter) from the Go module proxy into a cache (TPU_SERVING_E2E_CACHE); writes build/e2e/toolchain.json"
	@echo "stacks: $(STACKS)"

# Two stamps in the one venv: .runtime, the program's own requirements (requirements.txt: the package, editable,
# at constraints.txt's pins), all that preview, previews, check and policy need; .installed, the developer set
# (requirements-dev.txt: test, lint, mutation testing, workflow linters) on top of it. .installed depends on
# .runtime, so a developer target after a preview installs the developer set, and a change to requirements.txt
# reinstalls both.
$(VENV)/.runtime: requirements.txt constraints.txt pyproject.toml
	@echo "installing the program's environment into $(VENV) (once; about 40 s with a warm pip cache)"
	@test -x $(PYTHON) || $(PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "error: $(PY) is Python $$($(PY) -c 'import platform; print(platform.python_version())'); tpu-serving needs 3.11 or later (constraints.txt pins python-dateutil 4.0.0 and zizmor 1.32.0, which need it): run make PY=python3.11 ..." >&2; exit 2; }
	test -x $(PYTHON) || $(PY) -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements.txt -c constraints.txt
	touch $@

$(VENV)/.installed: $(VENV)/.runtime requirements-dev.txt constraints.txt
	@echo "installing the development tools into $(VENV) (once; about a minute with a warm pip cache, a few without)"
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt -c constraints.txt
	touch $@

venv-runtime: $(VENV)/.runtime

venv: $(VENV)/.installed

# The policy pack's own environment: pulumi-policy pins protobuf/grpcio differently.
$(POLICY_VENV)/.installed: policy/requirements.txt policy/constraints.txt
	@echo "installing the policy pack's environment into $(POLICY_VENV) (once)"
	test -x $(POLICY_VENV)/bin/python || $(PY) -m venv $(POLICY_VENV)
	$(POLICY_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r policy/requirements.txt -c policy/constraints.txt
	touch $@

policy-venv: $(POLICY_VENV)/.installed

# A tool's own environment: $(call tool-venv,<venv>,<requirements>,<constraints>) makes the venv and installs the
# pinned requirements into it (the recipe of <venv>/.installed).
define tool-venv
test -x $(1)/bin/python || $(PY) -m venv $(1)
$(1)/bin/python -m pip install --quiet --disable-pip-version-check -r $(2) -c $(3)
touch $(1)/.installed
endef

# Checkov's own environment: its pins do not resolve beside the program's (requirements-scan.txt).
$(SCAN_VENV)/.installed: requirements-scan.txt constraints-scan.txt
	@echo "installing Checkov into $(SCAN_VENV) (once)"
	$(call tool-venv,$(SCAN_VENV),requirements-scan.txt,constraints-scan.txt)

scan-venv: $(SCAN_VENV)/.installed

# The documentation site's environment: MkDocs and the Material theme (requirements-docs.txt).
$(DOCS_VENV)/.installed: requirements-docs.txt constraints-docs.txt
	@echo "installing MkDocs into $(DOCS_VENV) (once)"
	$(call tool-venv,$(DOCS_VENV),requirements-docs.txt,constraints-docs.txt)

docs-venv: $(DOCS_VENV)/.installed

preview: $(VENV)/.runtime
	$(TOOL) preview $(STACK)

previews: $(VENV)/.runtime
	@failed=""; for s in $(STACKS); do $(TOOL) preview $$s --quiet || failed="$$failed $$s"; done; \
	if [ -n "$$failed" ]; then echo "failed:$$failed" >&2; exit 1; fi

policy: $(VENV)/.runtime
	$(TOOL) policy

check: $(VENV)/.runtime
	$(TOOL) check$(if $(filter command line environment,$(origin STACK)),$(foreach s,$(STACK), --stack $(s)))

runbook: $(VENV)/.runtime
	$(TOOL) runbook --stack $(STACK)$(if $(WORKLOAD), --workload $(WORKLOAD))

scan: $(VENV)/.installed $(SCAN_VENV)/.installed
	$(TOOL) scan --checkov $(SCAN_VENV)/bin/checkov --stale-fails

# The per-stack scan results on the Security page (a slow test fails while they are stale).
scan-readme: $(VENV)/.installed $(SCAN_VENV)/.installed
	$(TOOL) scan --checkov $(SCAN_VENV)/bin/checkov --readme docs/security.md

# MOVE=<self-contained stack> TO="<platform stack> <model stack>": the move of that stack to the layered layout
# (docs/platform.md), the stack files of TO in stacks/ or stacks/moves/; fails if a cluster or node pool is replaced.
diff: $(VENV)/.installed
	$(if $(MOVE),$(PYTHON) -m tpu_serving_tools.diff.move --from $(MOVE) --to $(TO),$(TOOL) diff --base $(BASE) $(if $(filter command line,$(origin STACK)),--stack $(STACK)))

lint: $(VENV)/.installed
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .
	$(PYTHON) -m mypy
	$(PYTHON) -m tpu_serving_tools.complexity

# The reference files the tests read (tools/reference/sources.py: upstream, Go module, sha256): make reference fetches
# the missing ones (GOPROXY, default https://proxy.golang.org, for those in Go modules; raw.githubusercontent.com for
# the rest) and refuses any whose sha256 differs; the seeds' manifests are published nowhere as files, so it names
# them, with where to copy them from, and fails while they are missing. make reference-check fetches nothing.
reference: $(VENV)/.runtime
	$(PYTHON) -m tpu_serving_tools.reference.fetch

reference-check: $(VENV)/.runtime
	$(PYTHON) -m tpu_serving_tools.reference.fetch --check

# pytest exits 5 when it selects no test: make fails then too.
test: $(VENV)/.installed $(POLICY_VENV)/.installed
	$(PYTHON) -m pytest -q -n auto --dist loadfile -m "not slow and not e2e"

test-slow: $(VENV)/.installed $(POLICY_VENV)/.installed $(SCAN_VENV)/.installed $(DOCS_VENV)/.installed
	$(PYTHON) -m pytest -q -n auto -m slow

# The e2e tests: a real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok) on
# loopback, from the binaries the e2e toolchain built (their JSON: $$TPU_SERVING_E2E_TOOLCHAIN, default
# build/e2e/toolchain.json, which make e2e-tools writes, and make e2e runs first: seconds once cached); the tests skip,
# saying so, without it. Root: controllers run under unshare.
# The stacks make e2e deploys: empty, every stack but those tools/e2e/coverage.py's NOT_RUNNABLE names with the reason
# (the Go module proxy serves neither LWS v0.10.0, whose API the disaggregated vLLM stack needs, nor the PathwaysJob
# controller); the run prints them. E2E_STACKS=<stack> runs any.
# E2E_JOBS: the stacks run that many at a time, each in a process with a control plane of its own
# (tools/e2e/parallel.py). Measured on 2 cores, stacks llama31-405b-v6e16 and saxml-175b-v5e32x2: 145 s two at a
# time, 168 s one at a time (both passed); a stack's run is busier than it waits, so the gain is small.
# --durations names the slowest e2e tests in every run, CI's too, to find where the e2e time goes.
E2E_STACKS ?=
E2E_JOBS   ?= 2
e2e: $(VENV)/.installed e2e-tools
	$(PYTHON) -m pytest -q -m e2e -p no:cacheprovider --durations=25
	$(PYTHON) -m tpu_serving_tools.e2e.command --jobs $(E2E_JOBS) $(E2E_STACKS)

# The generated parts of the documentation (tests fail while they are stale): the settings reference and the
# components' API reference from the code, and the cost table from the stacks' previews.
readme: $(VENV)/.installed
	$(PYTHON) -m tpu_serving_tools.docgen.settings_tables
	$(PYTHON) -m tpu_serving_tools.docgen.api_reference
	$(PYTHON) -m tpu_serving_tools.docgen.cost_table
	$(PYTHON) -m tpu_serving_tools.e2e.coverage
	$(PYTHON) -m tpu_serving_tools.docgen.check_page
	$(PYTHON) -m tpu_serving_tools.docgen.stack_rows

# The documentation site, built strictly (a warning, such as a link to a missing page or anchor, fails) into
# build/site. README.md and CHANGELOG.md are included into it from the repository's root. NO_MKDOCS_2_WARNING
# silences Material's banner on its end of life (docs/development.md says what it says).
docs: $(DOCS_VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs build --strict --site-dir build/site

golden: $(VENV)/.installed
	$(PYTHON) -m tpu_serving_tools.golden.write

GOLDEN_BASE ?= main
# The library's error messages that the fast suite creates, recorded afresh into tests/golden_messages.txt.
messages: $(VENV)/.installed $(POLICY_VENV)/.installed
	rm -rf build/messages
	# The record is written even when the suite fails (a guard that reads the record, such as no raw pydantic
	# wording, fails until the record is rewritten); the target still fails with the suite.
	TPU_SERVING_RECORD_MESSAGES=$(CURDIR)/build/messages $(PYTHON) -m pytest -q -n auto --dist loadfile -m "not slow and not e2e" -p no:cacheprovider; \
	status=$$?; $(PYTHON) -m tests.messages build/messages && exit $$status

golden-review: $(VENV)/.installed
	$(PYTHON) -m tpu_serving_tools.golden.review $(GOLDEN_BASE) $(if $(VERBOSE),--verbose)

# Mutation testing of the library with mutmut (requirements-dev.txt). mutmut names a module by its path, so
# it mutates components/ through the link tpu_serving -> components (the import name); in its copy of the
# tree, mutants/components links to the mutated tpu_serving/, which the offline preview loads. The copy
# reads ../shared as the checkout does, through the link shared -> ../shared. MUTANTS narrows the run to
# mutant names (fnmatch), e.g. MUTANTS='tpu_serving.catalog.*'; the default is the whole library.
# SAMPLE=<n> runs a seeded (SEED) uniform sample of n mutants instead, held to the lower end of its 95%
# interval (tools/mutation.py): the first `mutmut run` only generates the mutants (its filter matches none,
# so it stops there with an error, which is ignored).
MUTANTS ?=
SAMPLE  ?=
SEED    ?= 23
mutate: $(VENV)/.installed
	ln -sfn components tpu_serving
	test -e shared || ln -sfn ../shared shared
	mkdir -p mutants && ln -sfn tpu_serving mutants/components
ifneq ($(SAMPLE),)
	-$(PYTHON) -m mutmut run 'tpu_serving.generate-only' > mutants/generate.log 2>&1
	$(PYTHON) -m mutmut run $$($(PYTHON) -m tpu_serving_tools.mutation sample $(SAMPLE) $(SEED))
else
	$(PYTHON) -m mutmut run $(MUTANTS)
endif
	$(PYTHON) -m mutmut export-cicd-stats
	$(PYTHON) -m tpu_serving_tools.mutation mutants/mutmut-cicd-stats.json

bench: $(VENV)/.installed
	$(PYTHON) -m tpu_serving_tools.preview.bench $(STACK)

# The e2e test's Go tools, built from the Go module proxy with their pins from the version set (e2e/tools/<tool>/go.mod
# and go.sum) into $(TPU_SERVING_E2E_CACHE) (default ~/.cache/tpu-serving/e2e), reused while their recipe is unchanged;
# build/e2e/toolchain.json maps each binary to its path. A cold build takes about half an hour on 2 cores
# (docs/development.md); a warm one seconds.
e2e-tools: $(VENV)/.installed
	$(PYTHON) -m tpu_serving_tools.e2e.toolchain

clean:
	rm -rf build .pytest_cache mutants .setuptools-build
