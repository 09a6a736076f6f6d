#!/usr/bin/env bash
# Resolves the Keycloak named in testdata/keycloak/pom.xml from Maven
# Central and unpacks it into .cache/keycloak-<version>/ at the repository
# root, where testenv finds it, and builds it once for an in-memory
# database without health or metrics endpoints (so each test start skips
# Keycloak's build step and opens no management port). Does nothing when
# the folder is complete for the current pom (its .complete file holds the
# pom's hash).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
pom="$root/internal/testenv/testdata/keycloak/pom.xml"
sum="$(sha256sum "$pom" | cut -d' ' -f1)"
version="$(sed -n 's:.*<keycloak.version>\(.*\)</keycloak.version>.*:\1:p' "$pom")"
dir="$root/.cache/keycloak-$version"
if [ "$(cat "$dir/.complete" 2>/dev/null)" != "$sum" ]; then
  echo "keycloak-install: resolving Keycloak $version into $dir"
  rm -rf "$dir.partial"
  mkdir -p "$dir.partial"
  mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$dir.partial/dist"
  tar -xzf "$dir.partial/dist/keycloak-quarkus-dist-$version.tar.gz" -C "$dir.partial" --strip-components=1
  rm -rf "$dir.partial/dist"
  test -x "$dir.partial/bin/kc.sh"
  "$dir.partial/bin/kc.sh" build --db=dev-mem --health-enabled=false --metrics-enabled=false >/dev/null
  echo "$sum" >"$dir.partial/.complete"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
fi
