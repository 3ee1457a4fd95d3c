#!/usr/bin/env bash
# Installs the pinned coding agents (Claude Code, Codex) into test/agents/node_modules for the agent tests.
# Idempotent: does nothing when the pinned versions are already there.
set -euo pipefail
cd "$(dirname "$0")/../test/agents"
want_cc=$(node -p 'require("./package.json").dependencies["@anthropic-ai/claude-code"]')
want_cx=$(node -p 'require("./package.json").dependencies["@openai/codex"]')
have() { node -p "try{require('./node_modules/$1/package.json').version}catch{''}" 2>/dev/null; }
if [ "$(have @anthropic-ai/claude-code)" = "$want_cc" ] && [ "$(have @openai/codex)" = "$want_cx" ]; then exit 0; fi
echo "install-agents: installing @anthropic-ai/claude-code@$want_cc and @openai/codex@$want_cx into test/agents" >&2
npm install --no-audit --no-fund --no-package-lock --loglevel=error >&2
