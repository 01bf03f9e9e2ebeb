# Every target creates its own virtual environment on a fresh machine and installs only the
# extras it needs: the demo the report extra, the tests the test extra, the docs the docs one.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo serve test test-all test-spark docs bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# One stamp per set of extras: installing a larger set later adds only what is missing.
$(VENV)/.installed-%: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[$(subst +,$(comma),$*)]"
	$(BIN)/cnb warm-up
	touch $@

comma := ,

demo: $(VENV)/.installed-report
	$(BIN)/cnb demo

# The service on the demo's organisation (run `make demo` first; it prepares the store).
serve: $(VENV)/.installed-report+service
	test -f demo-output/service.db || $(BIN)/cnb demo
	$(BIN)/cnb serve --store demo-output/service.db \
	    --directory demo-output/organisation/directory.json

# schemathesis tests the API contract from an environment of its own: the [caldav] extra
# installs urllib3-future under the name urllib3, which schemathesis' transport cannot use.
CONTRACT := .venv-contract
$(CONTRACT)/bin/schemathesis:
	$(PYTHON) -m venv $(CONTRACT)
	$(CONTRACT)/bin/pip install --quiet --upgrade pip
	$(CONTRACT)/bin/pip install --quiet "schemathesis>=4.32"

# The sign-in tests' OpenID Connect provider: oidc-provider from the npm registry (Node.js).
PROVIDER := tests/oidc_provider
$(PROVIDER)/node_modules/.package-lock.json: $(PROVIDER)/package-lock.json
	npm ci --prefix $(PROVIDER) --no-audit --no-fund --loglevel=error

test: $(VENV)/.installed-test $(CONTRACT)/bin/schemathesis $(PROVIDER)/node_modules/.package-lock.json
	$(BIN)/pytest -q -n 2 --dist loadgroup

test-all: $(VENV)/.installed-test+spark $(CONTRACT)/bin/schemathesis \
	    $(PROVIDER)/node_modules/.package-lock.json
	$(BIN)/pytest -q -n 2 --dist loadgroup -m "slow or not slow"

# The Spark tests alone (the JVM and pyspark are large: not part of `make test`).
test-spark: $(VENV)/.installed-test+spark
	$(BIN)/pytest -q tests/distributed/test_distributed.py tests/evaluation/test_collaborative.py \
	    src/clusterednb/distributed/spark.py src/clusterednb/evaluation/models/collaborative.py

docs: $(VENV)/.installed-docs+test
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet -d site

bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/bench_naive_bayes.py
	$(BIN)/python benchmarks/bench_clustered.py
	$(BIN)/python benchmarks/bench_sharded.py

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/python tools/check_layers.py

clean:
	rm -rf $(VENV) $(CONTRACT) $(PROVIDER)/node_modules build dist site src/*.egg-info .pytest_cache
