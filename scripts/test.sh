#!/usr/bin/env bash
# The whole check: formatting, lints, then every test. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "==> installing cargo-nextest"
  cargo install cargo-nextest --locked
fi
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
cargo nextest run --locked --no-fail-fast
