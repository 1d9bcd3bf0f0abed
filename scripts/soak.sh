#!/usr/bin/env bash
# The long forms of the reliability harnesses (issue 23); CI runs their short forms through
# scripts/test.sh. Each prints its one-line summary. Takes an hour or more.
#   CHALIE_FUZZ_CASES  inputs per fuzz target (default 1000000)
#   CHALIE_FUZZ_SEED   the generator's seed (default: a new one each run, printed)
#   CHALIE_KILL_ROUNDS kill -9 rounds (default 200); CHALIE_KILL_SEED their timing seed
#   CHALIE_CHAOS_TURNS turns under model faults (default 2000); CHALIE_CHAOS_SEED the fault draw
#   CHALIE_LONG_TURNS  turns of the long session (default 10000)
#   CHALIE_SOAK_TURNS  turns of the TUI memory soak on the built-in models (default 1000)
#   CHALIE_TEST_BIN    run this chalie-tui instead of cargo's (a copy, so that a build made
#                      meanwhile by another checkout sharing the target dir cannot swap it)
set -euo pipefail
cd "$(dirname "$0")/.."
export CHALIE_FUZZ_CASES="${CHALIE_FUZZ_CASES:-1000000}"
export CHALIE_FUZZ_SEED="${CHALIE_FUZZ_SEED:-$(date +%s)}"
echo "==> fuzzing: ${CHALIE_FUZZ_CASES} inputs per target, seed ${CHALIE_FUZZ_SEED}"
# Optimised, with this crate's debug assertions and overflow checks kept (a panic a debug build
# would raise must still be found): ~10x the inputs per second of the debug build, so the
# million per target take minutes (821 s for all six on 2 shared cores), not an hour.
cargo test --locked --profile bench --test it \
  --config 'profile.bench.package.chalie-tui.debug-assertions=true' \
  --config 'profile.bench.package.chalie-tui.overflow-checks=true' \
  -- --nocapture --test-threads 1 fuzz::fuzz_ 2>&1 | grep -E '^fuzz |test result|FAILED|panicked'
echo "==> kill -9 (turns, ACT turns, decay passes, forgets): ${CHALIE_KILL_ROUNDS:=200} rounds"
export CHALIE_KILL_ROUNDS
cargo nextest run --locked --no-capture -E 'test(/^kill9::/)' 2>&1 | grep -E '^kill9:|PASS|FAIL|panicked'
echo "==> model faults on every call kind: ${CHALIE_CHAOS_TURNS:=2000} turns"
export CHALIE_CHAOS_TURNS
cargo nextest run --locked --no-capture -E 'test(/^chaos::faults/)' 2>&1 | grep -E '^chaos|PASS|FAIL|panicked'
echo "==> long session: ${CHALIE_LONG_TURNS:=10000} turns"
export CHALIE_LONG_TURNS
cargo nextest run --locked --no-capture -E 'test(/^long_session::a_long/)' 2>&1 | grep -E '^long_session:|PASS|FAIL|panicked'
echo "==> TUI memory with the built-in models: ${CHALIE_SOAK_TURNS:=1000} turns (issue 22)"
# Its 100-turn lines (resident, anonymous, glibc's live heap, vectors, database size) and the summary.
cargo run --locked --profile bench --example tui_soak -- --turns "$CHALIE_SOAK_TURNS" 2>&1 \
  | grep -E '^tui_soak:|^[0-9]+ turns, rss'
