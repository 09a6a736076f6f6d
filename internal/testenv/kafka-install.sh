#!/usr/bin/env bash
# Resolves the Apache Kafka broker and tools named in testdata/kafka/pom.xml
# from Maven Central into .cache/kafka-<version>/ at the repository root,
# where testenv.RealKafka finds them. Does nothing when that folder is
# complete for the current pom (its .complete file holds the pom's hash).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
pom="$root/internal/testenv/testdata/kafka/pom.xml"
version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")"
dir="$root/.cache/kafka-$version"
sum="$(sha256sum "$pom" | cut -d' ' -f1)"
if [ "$(cat "$dir/.complete" 2>/dev/null)" = "$sum" ]; then
  exit 0
fi
echo "kafka-install: resolving Apache Kafka $version into $dir"
rm -rf "$dir.partial"
mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$dir.partial"
echo "$sum" >"$dir.partial/.complete"
rm -rf "$dir"
mv "$dir.partial" "$dir"
