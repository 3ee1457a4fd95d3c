#!/usr/bin/env bash
# Runs a command inside a private D-Bus session bus that has a throwaway, unlocked gnome-keyring
# serving the Secret Service, so keychain code can be tested for real on a headless Linux machine (CI,
# containers, SSH) without touching the user's own keyring.
#
#   scripts/with-keyring.sh npx vitest run test/secrets
#
# Debian packages it needs (the same list is in scripts/ci-apt-packages.txt, which CI installs from):
#   dbus            dbus-run-session, dbus-daemon and dbus-send (via dbus-bin / dbus-daemon)
#   gnome-keyring   gnome-keyring-daemon, the Secret Service implementation
# `@napi-rs/keyring` links no system library (its D-Bus client is built in), so libsecret is not needed.
#
# No TTY is needed. Each run gets its own bus, keyring folder and random password, so runs never
# interfere with each other or with a real keyring; the folder is removed afterwards. The command's exit
# code is passed through (128+N when it died of signal N).
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 COMMAND [ARG...]" >&2
  exit 2
fi

missing=()
for tool in dbus-run-session dbus-send gnome-keyring-daemon; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "with-keyring: not found: ${missing[*]}; install them with: apt-get install -y dbus gnome-keyring" >&2
  exit 127
fi

# The inner script runs inside the new session bus (dbus-run-session exports DBUS_SESSION_BUS_ADDRESS).
# shellcheck disable=SC2016
exec dbus-run-session -- bash -c '
set -uo pipefail
state=$(mktemp -d "${TMPDIR:-/tmp}/gateway-keyring.XXXXXX") || exit 1
mkdir -m 700 "$state/data" "$state/runtime"
keyring_pid=""
cleanup() {
  if [ -n "$keyring_pid" ]; then kill "$keyring_pid" 2>/dev/null || true; fi
  rm -rf "$state"
}
trap cleanup EXIT

# The keyring files and control socket go to the throwaway folder (XDG_DATA_HOME, XDG_RUNTIME_DIR for
# the daemon only). --unlock reads the password from stdin and, since no keyring exists there yet,
# creates the default "login" collection with it: without one, every write fails with "no result found".
password=$(head -c 24 /dev/urandom | base64)
if ! printf %s "$password" | XDG_DATA_HOME="$state/data" XDG_RUNTIME_DIR="$state/runtime" \
    gnome-keyring-daemon --replace --unlock --components=secrets --daemonize >/dev/null 2>"$state/daemon.log"; then
  echo "with-keyring: gnome-keyring-daemon failed to start:" >&2
  cat "$state/daemon.log" >&2
  exit 1
fi

# --daemonize returns once the daemon is up, but wait until it owns the name to be safe, and learn its
# pid so exactly that process is stopped at the end.
for _ in $(seq 1 50); do
  reply=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null) && {
    keyring_pid=$(printf %s "$reply" | awk "/uint32/ { print \$2 }")
    break
  }
  sleep 0.1
done
if [ -z "$keyring_pid" ]; then
  echo "with-keyring: the Secret Service (org.freedesktop.secrets) did not appear on the session bus" >&2
  exit 1
fi

"$@"
status=$?
exit "$status"
' with-keyring "$@"
