#!/usr/bin/env bash
# Installs the Python SDK (clients/python) for its tests: a virtualenv of its own at
# /opt/memql-python-sdk (so nothing else's Python packages are touched) holding the
# package in editable mode, from this checkout, with pytest, pytest-asyncio, mypy and
# ruff at pinned versions. Needs a python3 of 3.10 or later on PATH. Idempotent: installs only
# what is missing, at another version, or (the package) installed from another
# checkout, then checks that the package imports and the tools run. No retries: where
# the public index is unreachable, the configured mirrors answer at once.
set -euo pipefail
cd "$(dirname "$0")/../.."

VENV=${MEMQL_PYTHON_SDK_VENV:-/opt/memql-python-sdk}
SDK=$(pwd)/clients/python
PINS=(httpx==0.28.1 pytest==9.1.1 pytest-asyncio==1.4.0 mypy==2.4.0 ruff==0.16.9)

say() { printf '[install-python-sdk] %s\n' "$*"; }
fail() {
  printf '[install-python-sdk] FATAL: %s\n' "$*" >&2
  exit 1
}
venv_pip() { "$VENV/bin/pip" install --quiet --disable-pip-version-check --retries 0 "$@"; }

if [ ! -x "$VENV/bin/python" ]; then
  python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
    fail "the Python SDK needs python3 >= 3.10; found $(python3 --version 2>&1)"
  say "creating $VENV with $(python3 --version 2>&1)"
  python3 -m venv "$VENV" || fail "python3 -m venv $VENV failed"
fi

# Every pin present at its version? (prints the first one that is not)
missing=$("$VENV/bin/python" - "${PINS[@]}" <<'EOF'
import importlib.metadata as m, sys
for pin in sys.argv[1:]:
    name, version = pin.split("==")
    try:
        if m.version(name) != version:
            print(pin); break
    except m.PackageNotFoundError:
        print(pin); break
EOF
)
if [ -n "$missing" ]; then
  say "installing ${PINS[*]}"
  venv_pip "${PINS[@]}" || fail "pip install ${PINS[*]} failed"
else
  say "${PINS[*]} already present in $VENV"
fi

# The package, editable, from this checkout (a venv made from another checkout points there).
where=$("$VENV/bin/python" -c 'import memql_workbench, os; print(os.path.dirname(memql_workbench.__file__))' 2>/dev/null || true)
if [ "$where" != "$SDK/src/memql_workbench" ]; then
  say "installing memql-workbench in editable mode from $SDK"
  venv_pip --no-deps --editable "$SDK" || fail "pip install --editable $SDK failed"
else
  say "memql-workbench already installed from $SDK"
fi

"$VENV/bin/python" -c 'import memql_workbench, httpx' ||
  fail "$VENV/bin/python cannot import memql_workbench after the install"
"$VENV/bin/pytest" --version >/dev/null || fail "$VENV/bin/pytest does not run"
"$VENV/bin/mypy" --version >/dev/null || fail "$VENV/bin/mypy does not run"
"$VENV/bin/ruff" --version >/dev/null || fail "$VENV/bin/ruff does not run"
version=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("memql-workbench"))')
say "memql-workbench ${version} (editable, $SDK) with $("$VENV/bin/mypy" --version) in $VENV"
