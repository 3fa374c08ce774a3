#!/usr/bin/env bash
# Makes sure Debian's Chromium is at /usr/bin/chromium for the browser test
# (test/integration/docs.test.ts): installs it with apt-get when it is
# missing. CI runs as root on Debian; elsewhere sudo is used if it needs no
# password. Exits non-zero, saying why, when it cannot install.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
if [ -x "$CHROMIUM" ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: $CHROMIUM is missing and apt-get is not available; install Chromium by hand" >&2
  exit 2
fi
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "ensure-chromium: $CHROMIUM is missing and installing it needs root (apt-get install chromium)" >&2
  exit 3
fi

echo "ensure-chromium: installing Debian's chromium with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get -o DPkg::Lock::Timeout=300 update -qq
"${as_root[@]}" apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends chromium >&2
if [ ! -x "$CHROMIUM" ]; then
  echo "ensure-chromium: apt-get finished but $CHROMIUM is still missing" >&2
  exit 4
fi
