#!/usr/bin/env bash
# Installs kinesis-local (a Node build of kinesis-mock, from npm) into
# .cache/kinesis-local-<version>/ at the repository root, where
# testenv.Kinesis finds it. Does nothing when that folder is complete.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
version=0.6.2 # also KinesisLocalVersion in kinesis.go
dir="$root/.cache/kinesis-local-$version"
[ -f "$dir/.complete" ] && exit 0
echo "kinesis-install: installing kinesis-local $version into $dir"
rm -rf "$dir.partial"
mkdir -p "$dir.partial"
npm install --silent --no-audit --no-fund --prefix "$dir.partial" "kinesis-local@$version"
touch "$dir.partial/.complete"
rm -rf "$dir"
mv "$dir.partial" "$dir"
