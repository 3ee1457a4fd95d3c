#!/usr/bin/env bash
# Runs the whole test suite the way CI does: installs the Debian packages the real-keychain tests need
# (when missing), then runs typecheck + vitest inside a private D-Bus session with an unlocked
# gnome-keyring, with keychain tests required rather than skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
while read -r pkg; do
  [ -n "$pkg" ] || continue
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done < scripts/ci-apt-packages.txt
if [ "${#need[@]}" -gt 0 ]; then
  echo "test-all: installing ${need[*]} (for the real-keychain tests)" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

export PATH="$PWD/node_modules/.bin:$PATH"
export GATEWAY_REQUIRE_KEYRING=1
exec scripts/with-keyring.sh npm test
