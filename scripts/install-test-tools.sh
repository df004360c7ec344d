#!/usr/bin/env bash
# Installs the Debian packages some tests need and npm cannot bring: chromium for the viewer's
# browser tests (playwright-core drives it), pgbouncer for the test that runs the PostgreSQL
# store through PgBouncer in transaction mode (it starts its own, on a free port).
# Idempotent: installs only what is missing. Needs root (or sudo).
set -euo pipefail

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v pgbouncer >/dev/null 2>&1 || missing+=(pgbouncer)
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

run_as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "install-test-tools: need root (or sudo) to run: $*" >&2
    exit 1
  fi
}

export DEBIAN_FRONTEND=noninteractive
run_as_root apt-get update -qq >/dev/null
run_as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
[ -x /usr/bin/chromium ] || { echo "install-test-tools: /usr/bin/chromium is missing" >&2; exit 1; }
command -v pgbouncer >/dev/null 2>&1 || { echo "install-test-tools: pgbouncer is missing" >&2; exit 1; }
