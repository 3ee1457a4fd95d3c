#!/usr/bin/env bash
# `npm run test:all`, what CI runs (.ci/run): every suite, nothing skipped. Unlike `npm test`, it installs
# what the slow suites need and says so on stderr:
#   - Debian packages for the real-keychain and browser tests (dbus, gnome-keyring, chromium) when missing;
#   - the pinned coding agents into test/agents (scripts/install-agents.sh);
#   - the Python SDK venv (.venv/sdk) and the openai-go check program (.venv/sdk-go), by the SDK test itself;
#   - the packed package, installed into a temporary prefix with the system npm (test/install).
# Then it runs typecheck, lint and vitest inside a private D-Bus session with an unlocked gnome-keyring,
# with those suites required rather than skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
while read -r pkg; do
  [ -n "$pkg" ] || continue
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done < scripts/ci-apt-packages.txt
if [ "${#need[@]}" -gt 0 ]; then
  echo "test-all: installing ${need[*]} with apt-get (for the real-keychain and browser tests)" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

export PATH="$PWD/node_modules/.bin:$PATH"
if [ -f test/agents/package.json ]; then bash scripts/install-agents.sh; fi
if [ ! -d desktop/node_modules/electron ]; then
  echo "test-all: installing desktop/ devDependencies (Electron's types; its binary is skipped)" >&2
  npm run desktop:install --silent >&2
fi
echo "test-all: the SDK checks create .venv/sdk (pip install openai) and build .venv/sdk-go (go build) when missing; the package test packs and installs gateway-local into a temporary prefix" >&2

export GATEWAY_REQUIRE_KEYRING=1
export GATEWAY_REQUIRE_SDKS=1
export GATEWAY_REQUIRE_BROWSER=1
export GATEWAY_TEST_PACKAGE=1
export GATEWAY_REQUIRE_DESKTOP=1
export GATEWAY_REQUIRE_TEAM=1
npm run lint
exec scripts/with-keyring.sh npm test
