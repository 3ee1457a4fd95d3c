#!/usr/bin/env bash
# Type-checks the tray's main process against Electron's own types. Those come with desktop/'s
# devDependencies (`npm run desktop:install`, Electron's binary skipped): `npm run test:all` installs them;
# plain `npm test` skips this check, saying so, when they are absent.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d desktop/node_modules/electron ]; then
  if [ -n "${GATEWAY_REQUIRE_DESKTOP:-}" ]; then echo "desktop-typecheck: desktop/node_modules is missing (run npm run desktop:install)" >&2; exit 1; fi
  echo "desktop-typecheck: skipped (no desktop/node_modules; npm run desktop:install adds Electron's types)" >&2
  exit 0
fi
exec tsc -p desktop/tsconfig.json --noEmit
