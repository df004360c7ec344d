#!/usr/bin/env bash
# Installs Debian's chromium for the viewer's browser tests (playwright-core drives it).
# Idempotent: does nothing when /usr/bin/chromium is already there. Needs root (or sudo).
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  exit 0
fi

run_as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "install-chromium: need root (or sudo) to run: $*" >&2
    exit 1
  fi
}

export DEBIAN_FRONTEND=noninteractive
run_as_root apt-get update -qq >/dev/null
run_as_root apt-get install -y -qq --no-install-recommends chromium >/dev/null
if [ ! -x /usr/bin/chromium ]; then
  echo "install-chromium: apt-get finished but /usr/bin/chromium is missing" >&2
  exit 1
fi
