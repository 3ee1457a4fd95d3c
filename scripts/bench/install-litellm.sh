#!/usr/bin/env bash
# Installs LiteLLM's proxy (the benchmark's second peer), pinned, into its own virtualenv under .bench/,
# from PyPI. Idempotent: does nothing when the pinned version is already there. Exits non-zero (and the
# benchmark skips LiteLLM with a note) when Python 3 or the install is not available.
set -euo pipefail
VERSION="${LITELLM_VERSION:-1.106.10}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/.bench/litellm-venv"
py="${BENCH_PYTHON:-python3}"
command -v "$py" >/dev/null 2>&1 || { echo "no $py on PATH" >&2; exit 3; }
if [ -x "$venv/bin/litellm" ] && [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("litellm"))' 2>/dev/null)" = "$VERSION" ]; then
  exit 0
fi
echo "bench: installing litellm[proxy]==$VERSION into .bench/litellm-venv (the benchmark's second peer; once)" >&2
mkdir -p "$root/.bench"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "litellm[proxy]==$VERSION" >&2
