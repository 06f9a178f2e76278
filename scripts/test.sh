#!/usr/bin/env bash
# The test command: set everything up, check style and types, run the test suite.
# The tests mostly wait on sandboxed runs, so they run in parallel (pytest-xdist), a few more
# workers than cores; SUITEBENCH_TEST_WORKERS=0 runs them in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
SUITEBENCH_TEST_TOOLS=1 bash scripts/bootstrap.sh
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy
workers="${SUITEBENCH_TEST_WORKERS:-4}"
exec .venv/bin/python -m pytest -n "$workers" "$@"
