#!/usr/bin/env bash
# Provisions the real openlineage-python client for packages/server/test/python-client.test.ts: a virtual
# environment in a cache folder, reused while the pinned version and the Python version stay the same.
# Prints nothing but progress on stderr; the test finds the venv at the same path.
# Usage: packages/server/ci/python-client-setup.sh
set -euo pipefail
version="1.54.0"
cache="${HEADWATER_PYTHON_CLIENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/headwater-python-client}"
python="${PYTHON:-python3}"
export PIP_CACHE_DIR="$cache/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
venv="$cache/venv-openlineage-python-$version"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import openlineage.client" 2>/dev/null; then
  echo "--- python client: creating $venv" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q "openlineage-python==$version"
fi
"$venv/bin/python" -c "import openlineage.client, importlib.metadata as m; print('openlineage-python', m.version('openlineage-python'))" >&2
