#!/usr/bin/env bash
# Resolves the Apache Kafka broker and tools named in testdata/kafka/pom.xml
# from Maven Central into .cache/kafka-<version>/ at the repository root,
# where testenv.RealKafka finds them, and the Python client of
# testdata/kafka/requirements.txt into .cache/confluent-kafka/. Each step
# does nothing when its folder is complete for the current pom or
# requirements (its .complete file holds their hash).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
pom="$root/internal/testenv/testdata/kafka/pom.xml"
version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")"
dir="$root/.cache/kafka-$version"
sum="$(sha256sum "$pom" | cut -d' ' -f1)"
if [ "$(cat "$dir/.complete" 2>/dev/null)" != "$sum" ]; then
  echo "kafka-install: resolving Apache Kafka $version into $dir"
  rm -rf "$dir.partial"
  mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$dir.partial"
  echo "$sum" >"$dir.partial/.complete"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
fi

# confluent-kafka (librdkafka) in a virtualenv of its own.
reqs="$root/internal/testenv/testdata/kafka/requirements.txt"
venv="$root/.cache/confluent-kafka"
sum="$(sha256sum "$reqs" | cut -d' ' -f1)"
if [ "$(cat "$venv/.complete" 2>/dev/null)" != "$sum" ]; then
  echo "kafka-install: installing confluent-kafka into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$reqs"
  echo "$sum" >"$venv/.complete"
fi
