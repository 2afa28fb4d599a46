# `make test` and `make demo` work from a fresh clone: they create .venv and install into it.
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
# Extras to install: `make test` needs only "test"; CI adds the optional engines (jax, torch),
# whose tests skip cleanly when they are absent. The "numba" engine installs fast but is not in
# CI: the spec list's run through it compiles ~1400 kernels (about 10 minutes with a cold numba
# cache); `make test EXTRAS=test,numba` runs it.
EXTRAS ?= test
comma := ,

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
