#!/usr/bin/env bash
# Runs the kedro-openlineage tests: a virtual environment with real Kedro and the plugin installed from this folder,
# a Headwater server built from this repository, pytest. Idempotent: the venv and pip's cache live in a cache folder
# and are reused; the venv is rebuilt when the constraints or pyproject.toml change.
# Usage: packages/kedro-openlineage/ci/run-tests.sh [pytest args...]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${KEDRO_OPENLINEAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/headwater-kedro-openlineage}"
python="${PYTHON:-python3}"
export PIP_CACHE_DIR="$cache/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
export KEDRO_DISABLE_TELEMETRY=true DO_NOT_TRACK=1
# The tests start their own servers on the embedded store in temporary data dirs; CI's DATABASE_URL (exported by
# .ci/run for the main suite) would point them all at one PostgreSQL database, where only one may write.
unset DATABASE_URL

key="$( (cat "$here/ci/constraints.txt" "$here/pyproject.toml"; "$python" --version) | sha256sum | cut -c1-16)"
venv="$cache/venv-$key"
if [ ! -x "$venv/bin/pytest" ]; then
  echo "--- kedro-openlineage: creating $venv"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q -c "$here/ci/constraints.txt" "$here[test]"
fi
echo "--- kedro-openlineage: installing the plugin from $here"
"$venv/bin/pip" install -q --no-deps --force-reinstall "$here"
"$venv/bin/python" -c 'import kedro, openlineage.client, kedro_openlineage; print("kedro", kedro.__version__, "| kedro-openlineage", kedro_openlineage.__version__)'

echo "--- kedro-openlineage: building the Headwater server (tsc -b)"
if [ ! -d "$repo/node_modules" ]; then
  (cd "$repo" && npm ci --no-audit --no-fund)
fi
(cd "$repo" && npx tsc -b)

echo "--- kedro-openlineage: pytest"
cd "$here/tests"
status=0
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "kedro-openlineage: pytest collected no tests; that is a failure here" >&2
fi
exit "$status"
