#!/usr/bin/env bash
# Provisions what the streams tests need beyond npm: the jars of a Kafka 4.4 broker (from Maven Central) and a Python
# venv with the real openlineage-python Kafka transport (openlineage-python + confluent-kafka, from PyPI).
# Idempotent: everything lives in a cache folder keyed by the versions, and a present, complete copy is reused.
# The tests find the cache at the same default path, or at HEADWATER_KAFKA_CACHE when it is set.
# Usage: packages/server/ci/kafka-setup.sh
set -euo pipefail
kafka_version=4.4.0
log4j_version=2.25.2
openlineage_version=1.54.0
confluent_kafka_version=2.16.1
default_cache=/var/cache/headwater
[ -w /var/cache ] || default_cache="${XDG_CACHE_HOME:-$HOME/.cache}/headwater"
cache="${HEADWATER_KAFKA_CACHE:-$default_cache}"
lib="$cache/kafka-$kafka_version/lib"
python="${PYTHON:-python3}"

if [ -f "$lib/.complete" ]; then
  echo "--- kafka: jars present in $lib"
else
  echo "--- kafka: resolving kafka_2.13:$kafka_version, kafka-tools and log4j-slf4j-impl:$log4j_version from Maven Central"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.headwater</groupId>
  <artifactId>kafka-test-broker</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$kafka_version</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$kafka_version</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>$log4j_version</version></dependency>
  </dependencies>
</project>
POM
  rm -rf "$lib"
  mkdir -p "$lib"
  mvn -q -B -f "$work/pom.xml" -Dmaven.repo.local="$cache/m2" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$lib"
  ls "$lib"/kafka_2.13-"$kafka_version".jar "$lib"/kafka-tools-"$kafka_version".jar >/dev/null
  touch "$lib/.complete"
  echo "--- kafka: $(ls "$lib"/*.jar | wc -l) jars in $lib"
fi

venv="$cache/openlineage-python-$openlineage_version-venv"
if [ -f "$venv/.complete" ]; then
  echo "--- kafka: openlineage-python venv present in $venv"
else
  echo "--- kafka: creating $venv (openlineage-python $openlineage_version, confluent-kafka $confluent_kafka_version)"
  export PIP_CACHE_DIR="$cache/pip" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q "openlineage-python==$openlineage_version" "confluent-kafka==$confluent_kafka_version"
  "$venv/bin/python" -c 'import confluent_kafka, openlineage.client; print("confluent-kafka", confluent_kafka.version(), "openlineage-python", __import__("importlib.metadata").metadata.version("openlineage-python"))'
  touch "$venv/.complete"
fi
