#!/usr/bin/env bash
# Installs the real NATS server and the nats CLI that the NATS process tests
# drive into .cache/bin/ at the repository root, where testenv.NATSProcess and
# testenv.NATSCLI find them. Each is built once per pinned version: the
# binaries are named with their version, so a bump installs the new one.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="$root/.cache/bin"
mkdir -p "$bin"
install() { # module@version binary-name
  local out="$bin/$2-${1##*@}"
  [ -x "$out" ] && return 0
  echo "nats-install: building $1"
  local tmp
  tmp="$(mktemp -d)"
  GOBIN="$tmp" go install "$1"
  mv "$tmp/$2" "$out"
  rm -rf "$tmp"
}
install github.com/nats-io/nats-server/v2@v2.15.3 nats-server
install github.com/nats-io/natscli/nats@v0.5.0 nats
