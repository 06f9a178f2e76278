#!/usr/bin/env bash
# Install everything suitebench needs, idempotently: Debian's bubblewrap (when root and missing),
# a virtual environment in .venv, and the package with its extras in editable mode.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${SUITEBENCH_EXTRAS:-dask,llm,agents,report,build,datasets,dev}"

# debian_package NAME WHY-IF-MISSING: install Debian's NAME when root (apt-get), else say why
# it matters.
debian_package() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: installing $1" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1") >&2 \
      || echo "bootstrap: could not install $1; $2" >&2
  else
    echo "bootstrap: $1 missing and not root; $2" >&2
  fi
}

if ! command -v bwrap >/dev/null 2>&1; then
  debian_package bubblewrap "the unshare (or plain) backend will be used"
fi
# The sandbox's system-call filter is built by libseccomp (run/syscalls.py): Debian's
# libseccomp2, present on nearly every system.
if ! ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2'; then
  debian_package libseccomp2 "no sandbox starts without it"
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

# --- test tools (SUITEBENCH_TEST_TOOLS=1, set by scripts/test.sh) --------------------------
# The report tests open pages in a real browser and the Stryker report in its published viewer:
# Debian's chromium (as root, when missing) and the npm packages mutation-testing-elements and
# mutation-testing-report-schema, unpacked into .cache/npm/NAME/package (pinned; a second run
# fetches nothing). The tests never install anything: they fail naming this step instead.
if [ "${SUITEBENCH_TEST_TOOLS:-0}" = 1 ]; then
  if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
    debian_package chromium "the browser tests will fail"
  fi
  # The Java and PyPy verdict tests judge real programs: Debian's JDK (when javac is missing)
  # and pypy3, like chromium; the Rust and Go mutant-build tests build real programs:
  # Debian's golang-go and cargo (with its rustc) when go or cargo is missing.
  for pkg in openjdk-17-jdk-headless:javac pypy3:pypy3 golang-go:go cargo:cargo; do
    name="${pkg%%:*}" tool="${pkg#*:}"
    if ! command -v "$tool" >/dev/null 2>&1; then
      debian_package "$name" "the $tool verdict tests will fail"
    fi
  done
  npm_dir=".cache/npm"
  for spec in mutation-testing-elements@3.9.0 mutation-testing-report-schema@3.8.4; do
    name="${spec%@*}"
    if [ "$(cat "$npm_dir/$name/version" 2>/dev/null)" = "$spec" ]; then
      continue
    fi
    if ! command -v npm >/dev/null 2>&1; then
      echo "bootstrap: npm missing; cannot fetch $spec for the Stryker viewer tests" >&2
      continue
    fi
    echo "bootstrap: fetching $spec into $npm_dir/$name" >&2
    tmp="$(mktemp -d)"
    if tgz="$(cd "$tmp" && npm pack "$spec" --silent 2>/dev/null | tail -n 1)" \
      && tar xzf "$tmp/$tgz" -C "$tmp"; then
      rm -rf "${npm_dir:?}/$name"
      mkdir -p "$npm_dir/$name"
      mv "$tmp/package" "$npm_dir/$name/package"
      echo "$spec" > "$npm_dir/$name/version"
    else
      echo "bootstrap: could not fetch $spec; the Stryker viewer tests will fail" >&2
    fi
    rm -rf "$tmp"
  done
fi
