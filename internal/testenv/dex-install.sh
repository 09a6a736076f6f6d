#!/usr/bin/env bash
# Builds the Dex OpenID Connect provider pinned in testdata/dex/go.mod into
# .cache/bin/dex at the repository root, where testenv.StartDex finds it.
# `go install github.com/dexidp/dex/cmd/dex@version` is refused (Dex's
# go.mod has a replace directive), so testdata/dex is a module of its own
# that requires Dex and names its command as a tool; its go.sum makes the
# build reproducible. Does nothing when .cache/bin/dex.stamp holds the hash
# of that go.mod and go.sum. About two minutes the first time.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
mod="$root/internal/testenv/testdata/dex"
bin="$root/.cache/bin"
version=v2.45.1 # the tag of the pseudo-version in $mod/go.mod; `dex version` prints it
sum="$(cat "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -d' ' -f1)"
if [ -x "$bin/dex" ] && [ "$(cat "$bin/dex.stamp" 2>/dev/null)" = "$sum" ]; then
  exit 0
fi
echo "dex-install: building Dex $version into $bin/dex"
mkdir -p "$bin"
# No cgo: the tests use memory storage, and Dex's SQLite storage is the
# only part that needs it (compiling SQLite would double the build time).
(cd "$mod" && CGO_ENABLED=0 go build -ldflags "-X main.version=$version" -o "$bin/dex.partial" github.com/dexidp/dex/cmd/dex)
mv "$bin/dex.partial" "$bin/dex"
echo "$sum" >"$bin/dex.stamp"
