#!/usr/bin/env bash
# Provisions the real producers the interop suite (packages/server/test/interop) drives: one Python venv with the
# openlineage-python client, dbt-ol with dbt-postgres and pyspark (requirements.txt), and the Spark listener jar
# from Maven Central. Idempotent: the venv, pip's cache and the Maven repository live in a cache folder and are
# reused; the venv is rebuilt only when requirements.txt or the Python version changes, the jar fetched only once.
# Prints the folder to hand to the suite as HEADWATER_INTEROP_CACHE (the suite's default is the same folder).
# Usage: packages/server/test/interop/ci/setup.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${HEADWATER_INTEROP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/headwater-interop}"
python="${PYTHON:-python3}"
spark_listener="io.openlineage:openlineage-spark_2.12:1.53.0"
export PIP_CACHE_DIR="$cache/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
mkdir -p "$cache"
started=$(date +%s)

key="$( (cat "$here/requirements.txt"; "$python" --version) | sha256sum | cut -c1-16)"
venv="$cache/venv-$key"
if [ ! -x "$venv/bin/dbt-ol" ] || [ ! -f "$venv/.complete" ]; then
  echo "--- interop: creating $venv"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q -r "$here/requirements.txt"
  touch "$venv/.complete"
fi
ln -sfn "$venv" "$cache/venv"

jar="$cache/jars/openlineage-spark_2.12-1.53.0.jar"
if [ ! -f "$jar" ]; then
  echo "--- interop: resolving $spark_listener from Maven Central"
  mvn -q -B -Dmaven.repo.local="$cache/m2" dependency:copy \
    -Dartifact="$spark_listener" -DoutputDirectory="$cache/jars.partial"
  mkdir -p "$cache/jars"
  mv "$cache/jars.partial/"*.jar "$cache/jars/"
  rmdir "$cache/jars.partial"
fi

"$venv/bin/python" - <<'PY'
import importlib.metadata as m
print("--- interop:", ", ".join(f"{p} {m.version(p)}" for p in
      ["openlineage-python", "openlineage-dbt", "dbt-core", "dbt-postgres", "pyspark"]))
PY
echo "--- interop: provisioned in $(( $(date +%s) - started )) s: HEADWATER_INTEROP_CACHE=$cache"
