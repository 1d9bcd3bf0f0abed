#!/usr/bin/env bash
# Build chalie-tui (release) and open it. Extra arguments go to chalie-tui.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cargo build --release --locked
exec target/release/chalie-tui "$@"
