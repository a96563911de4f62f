#!/usr/bin/env bash
# Prepare this machine for Jarvis, idempotently: a static busybox (the default stack's image is built
# from it, no registry needed), git and npm (jarvis_project and its tests), a virtualenv with Jarvis and
# its test extra, a working `docker compose` v2+, and the default stack's base image. Fails loudly when something cannot be had.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_install() {  # Debian packages, or a clear message where apt is not ours to use
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "setup: installing $*" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    echo "setup: please install $* (Debian/Ubuntu package names)" >&2
    exit 1
  fi
}
missing=()
# ldd exits 1 on a static binary: keep its status out of the pipeline (pipefail).
if ! { [ -x /bin/busybox ] && { ldd /bin/busybox 2>&1 || true; } | grep -qE 'not a dynamic|statically linked'; }; then
  missing+=(busybox-static)
fi
command -v git >/dev/null || missing+=(git)  # jarvis_project diff
command -v npm >/dev/null || missing+=(npm)  # the tests run a real `npm test` for jarvis_project's node suite
command -v ssh >/dev/null || missing+=(openssh-client)  # jarvis_share's ssh tunnel
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)  # the share tests start their own sshd on 127.0.0.1 as the relay
if [ ${#missing[@]} -gt 0 ]; then
  apt_install "${missing[@]}"
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"
# MCPM 2.15 itself, in its own virtualenv (its pins conflict with ours): the compatibility tests run the real
# `mcpm` against files Jarvis writes and read what `mcpm` writes. Jarvis never imports it.
if [ ! -x .venv-mcpm/bin/mcpm ]; then
  "$python" -m venv .venv-mcpm
  .venv-mcpm/bin/python -m pip install -q --disable-pip-version-check "mcpm==2.15.0"
fi
# Third-party MCP clients, each in its own virtualenv (their `mcp` pins differ from ours and each other's): the
# tests in tests/clients drive `jarvis serve` with them, one protocol era each. Installed once (mcp-cli is the
# slow one: about 2 minutes and 600 MB); Jarvis never imports them.
for client in fastmcp==4.1.2 mcp-use==1.7.1 mcp-cli==0.20.1; do
  folder=.venv-clients/${client%%==*}
  if [ ! -f "$folder/.installed" ]; then
    rm -rf "$folder"
    "$python" -m venv "$folder"
    "$folder/bin/python" -m pip install -q --disable-pip-version-check "$client"
    touch "$folder/.installed"
  fi
done
.venv/bin/jarvis setup
