#!/usr/bin/env bash
# Provisions Marquez's own clients for test/interop/marquez-clients.test.ts: marquez-python (PyPI) in a venv in a
# cache folder with pip's cache beside it, rebuilt only when requirements.txt or the Python version changes, and
# marquez-java (Maven Central) with the Maven repository in the same folder.
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
# Marquez's Java client and its dependencies from Maven Central, into $cache/java/lib. Where Maven Central does not
# serve it (this project's machines get "not found" for io.github.marquezproject), that answer is kept in
# $cache/java/unavailable, so the test can tell a client the registry lacks from a setup that was never run.
java_client="io.github.marquezproject:marquez-java:0.51.1"
if [ ! -f "$cache/java/.complete" ]; then
  echo "--- marquez clients: resolving $java_client from Maven Central"
  rm -rf "$cache/java" && mkdir -p "$cache/java"
  cat > "$cache/java/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>headwater.interop</groupId><artifactId>marquez-java-client</artifactId><version>1</version>
  <dependencies><dependency><groupId>io.github.marquezproject</groupId><artifactId>marquez-java</artifactId>
    <version>0.51.1</version></dependency></dependencies>
</project>
POM
  if mvn -q -B -f "$cache/java/pom.xml" -Dmaven.repo.local="$cache/m2" dependency:copy-dependencies \
    -DoutputDirectory="$cache/java/lib" >"$cache/java/mvn.log" 2>&1; then
    touch "$cache/java/.complete"
  else
    grep -m1 -o "Could not find artifact [^ ]*\|Could not resolve dependencies.*" "$cache/java/mvn.log" >"$cache/java/unavailable" ||
      { cat "$cache/java/mvn.log" >&2; exit 1; }
    echo "--- marquez clients: Maven Central does not serve $java_client: $(cat "$cache/java/unavailable")"
    rm -rf "$cache/java/lib"
  fi
fi
[ -f "$cache/java/.complete" ] && echo "--- marquez clients: marquez-java 0.51.1 in $cache/java/lib"
echo "--- marquez clients: provisioned: HEADWATER_MARQUEZ_CLIENTS_CACHE=$cache"
