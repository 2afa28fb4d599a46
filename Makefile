# `make test` and `make demo` work from a fresh clone: they create .venv and install into it.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
# Extras to install: `make test` needs only "test"; CI adds the optional engines (jax, torch,
# numba), whose tests skip cleanly when they are absent. On numba the suite runs a slice of the
# spec list (about a minute of numba compiles with a cold cache); VECGRAD_NUMBA_FULL=1 runs all
# of it (minutes more), e.g. `VECGRAD_NUMBA_FULL=1 make test EXTRAS=test,numba`.
EXTRAS ?= test
comma := ,
# (after EXTRAS: one stamp per set of extras, so that adding one installs it)
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))

.PHONY: test demo bench lint clean

$(VPY):
	$(PY) -m venv $(VENV)

$(STAMP): $(VPY) pyproject.toml
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e ".[$(EXTRAS)]"
	touch $(STAMP)

test: $(STAMP)
	$(VPY) -m ruff check src tests bench examples
	VECGRAD_TYPECHECK=1 $(VPY) -m pytest -q tests

demo: $(STAMP)
	$(VPY) -m vecgrad demo

bench: $(STAMP)
	$(VPY) bench/run.py

lint: $(STAMP)
	$(VPY) -m ruff check src tests bench examples examples

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
