#!/usr/bin/env bash
# Provisions Marquez's own Python client (marquez-python, PyPI) for test/interop/marquez-clients.test.ts: a venv in
# a cache folder with pip's cache beside it, rebuilt only when requirements.txt or the Python version changes.
# Idempotent; prints the folder to hand to the test as HEADWATER_MARQUEZ_CLIENTS_CACHE (its default is the same).
# Usage: packages/server/test/interop/marquez-clients/ci/setup.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${HEADWATER_MARQUEZ_CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/headwater-marquez-clients}"
python="${PYTHON:-python3}"
export PIP_CACHE_DIR="$cache/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
mkdir -p "$cache"

key="$( (cat "$here/requirements.txt"; "$python" --version) | sha256sum | cut -c1-16)"
venv="$cache/venv-$key"
if [ ! -f "$venv/.complete" ] || ! "$venv/bin/python" -c "import marquez_client" 2>/dev/null; then
  echo "--- marquez clients: creating $venv"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q -r "$here/requirements.txt"
  touch "$venv/.complete"
fi
ln -sfn "$venv" "$cache/python-venv"
"$venv/bin/python" -c "import importlib.metadata as m; print('--- marquez clients: marquez-python', m.version('marquez-python'))"
echo "--- marquez clients: provisioned: HEADWATER_MARQUEZ_CLIENTS_CACHE=$cache"
