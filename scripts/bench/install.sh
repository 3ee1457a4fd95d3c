#!/usr/bin/env bash
# Installs the benchmark's peers (Portkey's gateway) into scripts/bench/node_modules for `npm run bench`.
# Idempotent: does nothing when the pinned version is already there.
set -euo pipefail
cd "$(dirname "$0")"
want=$(node -p 'require("./package.json").dependencies["@portkey-ai/gateway"]')
have=$(node -p "try{require('./node_modules/@portkey-ai/gateway/package.json').version}catch{''}" 2>/dev/null || true)
if [ "$have" = "$want" ]; then exit 0; fi
echo "bench: installing @portkey-ai/gateway@$want into scripts/bench (the benchmark's peer)" >&2
npm install --no-audit --no-fund --no-package-lock --loglevel=error >&2
