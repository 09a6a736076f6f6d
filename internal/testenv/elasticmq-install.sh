#!/usr/bin/env bash
# Resolves the ElasticMQ server named in testdata/elasticmq/pom.xml from
# Maven Central into .cache/elasticmq-<version>/ at the repository root,
# where testenv.ElasticMQ finds it. Does nothing when the folder is
# complete for the current pom (its .complete file holds the pom's hash).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
pom="$root/internal/testenv/testdata/elasticmq/pom.xml"
sum="$(sha256sum "$pom" | cut -d' ' -f1)"
version="$(sed -n 's:.*<elasticmq.version>\(.*\)</elasticmq.version>.*:\1:p' "$pom")"
dir="$root/.cache/elasticmq-$version"
if [ "$(cat "$dir/.complete" 2>/dev/null)" != "$sum" ]; then
  echo "elasticmq-install: resolving ElasticMQ $version into $dir"
  rm -rf "$dir.partial"
  mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$dir.partial"
  echo "$sum" >"$dir.partial/.complete"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
fi
