#!/usr/bin/env bash
# Install everything suitebench needs, idempotently: Debian's bubblewrap (when root and missing),
# a virtual environment in .venv, and the package with its extras in editable mode.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${SUITEBENCH_EXTRAS:-dask,llm,agents,report,build,dev}"

if ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: installing bubblewrap" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap) >&2 \
      || echo "bootstrap: could not install bubblewrap; the unshare backend will be used" >&2
  else
    echo "bootstrap: bubblewrap missing and not root; the unshare or plain backend will be used" >&2
  fi
fi

py="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv" >&2
  "$py" -m venv .venv
fi
stamp=".venv/.suitebench-installed"
want="$(cat pyproject.toml | sha256sum | cut -c1-16)-$extras"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "bootstrap: installing suitebench[$extras] into .venv" >&2
  .venv/bin/python -m pip install -q --upgrade pip >&2
  .venv/bin/python -m pip install -q -e ".[$extras]" >&2
  echo "$want" > "$stamp"
fi
