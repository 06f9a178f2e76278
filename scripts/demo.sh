#!/usr/bin/env bash
# The main job: set everything up, then run the bundled end-to-end demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/suitebench demo "$@"
