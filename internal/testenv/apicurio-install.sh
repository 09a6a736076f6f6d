#!/usr/bin/env bash
# Resolves the Apicurio Registry named in testdata/apicurio/pom.xml from
# Maven Central and unpacks it into .cache/apicurio-<version>/ at the
# repository root, where testenv.SchemaRegistry finds it. Does nothing when
# the folder is complete for the current pom (its .complete file holds the
# pom's hash).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
pom="$root/internal/testenv/testdata/apicurio/pom.xml"
sum="$(sha256sum "$pom" | cut -d' ' -f1)"
version="$(sed -n 's:.*<apicurio.version>\(.*\)</apicurio.version>.*:\1:p' "$pom")"
dir="$root/.cache/apicurio-$version"
if [ "$(cat "$dir/.complete" 2>/dev/null)" != "$sum" ]; then
  echo "apicurio-install: resolving Apicurio Registry $version into $dir"
  rm -rf "$dir.partial"
  mkdir -p "$dir.partial"
  mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$dir.partial/dist"
  tar -xzf "$dir.partial/dist/apicurio-registry-app-$version-all.tar.gz" -C "$dir.partial"
  rm -rf "$dir.partial/dist"
  test -f "$dir.partial/apicurio-registry-app-$version-runner.jar"
  echo "$sum" >"$dir.partial/.complete"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
fi
