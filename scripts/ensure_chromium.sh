#!/usr/bin/env bash
# Installs Debian's chromium for the browser test when it is missing.
# Where installation is impossible the browser test skips itself and says why.
set -u
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure_chromium: /usr/bin/chromium missing and apt-get unavailable (not root); the browser test will be skipped."
  exit 0
fi
echo "ensure_chromium: installing Debian's chromium (apt-get)..."
(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/tmp/dphawkes-apt.log 2>&1 \
  || echo "ensure_chromium: apt-get install chromium failed (see /tmp/dphawkes-apt.log); the browser test will be skipped."
exit 0
