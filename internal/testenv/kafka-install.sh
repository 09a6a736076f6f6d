#!/usr/bin/env bash
# Resolves the Apache Kafka broker and tools named in testdata/kafka/pom.xml
# from Maven Central into .cache/kafka-<version>/ at the repository root,
# for the pinned release and for the older line the pom names,
# where testenv.RealKafka finds them, and the Python client of
# testdata/kafka/requirements.txt into .cache/confluent-kafka/. Each step
# does nothing when its folder is complete for the current pom or
# requirements (its .complete file holds their hash).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
pom="$root/internal/testenv/testdata/kafka/pom.xml"
sum="$(sha256sum "$pom" | cut -d' ' -f1)"
# The pinned release, then the older line the core lag tests also run on.
for property in kafka.version kafka.previous.version; do
  version="$(sed -n "s:.*<$property>\(.*\)</$property>.*:\1:p" "$pom")"
  dir="$root/.cache/kafka-$version"
  if [ "$(cat "$dir/.complete" 2>/dev/null)" != "$sum" ]; then
    echo "kafka-install: resolving Apache Kafka $version into $dir"
    rm -rf "$dir.partial"
    mvn -q -B -f "$pom" dependency:copy-dependencies -Dkafka.version="$version" -DoutputDirectory="$dir.partial"
    echo "$sum" >"$dir.partial/.complete"
    rm -rf "$dir"
    mv "$dir.partial" "$dir"
  fi
done

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
