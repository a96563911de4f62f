#!/usr/bin/env bash
# Prepare this machine for Jarvis, idempotently: a static busybox (the default stack's image is built
# from it, no registry needed), a virtualenv with Jarvis and its test extra, a working `docker compose`
# v2+, and the default stack's base image. Fails loudly when something cannot be had.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! { [ -x /bin/busybox ] && ldd /bin/busybox 2>&1 | grep -qE 'not a dynamic|statically linked'; }; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "setup: installing busybox-static" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq busybox-static >/dev/null
  else
    echo "setup: please install a static busybox (Debian/Ubuntu: busybox-static)" >&2
    exit 1
  fi
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"
.venv/bin/jarvis setup
