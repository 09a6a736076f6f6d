#!/usr/bin/env bash
# Builds the framework programs of testdata/frameworks (Spring Kafka, Spring
# AMQP, Kafka Connect, the share consumer, a Kafka Streams application) with Maven into .cache/frameworks/<module>/ at the
# repository root, each module's jar beside its dependencies in lib/, where
# testenv.Framework finds them. Maven's local repository is .cache/m2, so a
# CI cache of .cache keeps the downloads. Does nothing when the folder was
# built from the current sources (its .complete file holds their hash).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
src="$root/internal/testenv/testdata/frameworks"
dir="$root/.cache/frameworks"
sum="$(cd "$src" && find . -type f -not -path '*/target/*' | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$dir/.complete" 2>/dev/null)" != "$sum" ]; then
  echo "frameworks-install: building the framework programs into $dir"
  rm -rf "$dir.partial"
  mvn -q -B -Dmaven.repo.local="$root/.cache/m2" -Dqw.out="$dir.partial" -f "$src/pom.xml" package
  echo "$sum" >"$dir.partial/.complete"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
fi
