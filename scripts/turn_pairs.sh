#!/usr/bin/env bash
# Compare builds of the turn bench in alternating runs on the same machine, which is how a
# change to the turn is judged on a noisy host (docs/architecture.md §9).
#
#   scripts/turn_pairs.sh OUT ROUNDS SIZE name=BINARY [name=BINARY ...]
#
# Each BINARY is a `turn` bench executable (`cargo bench --bench turn --no-run` prints its
# path; copy it away before building the next one, as every build has the same file name).
# SIZE is a group of the bench (1k, 100k or 1m). Every round runs each binary once, the order
# reversed every other round, its turns logged to OUT/<name>/r<round>/turns-<SIZE>.jsonl; then
# scripts/turn_pairs.py pools them (median and p99 over every turn, each round's median and
# ratio to the first name, the stage medians).
set -euo pipefail
if [[ $# -lt 4 ]]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
out=$1 rounds=$2 size=$3
shift 3
pairs=("$@")
names=()
for p in "${pairs[@]}"; do names+=("${p%%=*}"); done
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
for ((r = 1; r <= rounds; r++)); do
  order=("${pairs[@]}")
  if ((r % 2 == 0)); then
    order=()
    for ((i = ${#pairs[@]} - 1; i >= 0; i--)); do order+=("${pairs[$i]}"); done
  fi
  for p in "${order[@]}"; do
    name=${p%%=*} bin=$(realpath "${p#*=}")
    dir="$out/$name/r$r"
    mkdir -p "$dir"
    (cd "$root" && CHALIE_BENCH_SIZES=$size CHALIE_BENCH_TURNS=$(realpath "$dir") "$bin" --bench "deterministic/$size" \
      >"$dir/stdout" 2>&1)
    echo "round $r $name: $(grep "BENCHFIG name=turn/$size " "$dir/stdout" | head -1)" >&2
  done
done
python3 "$root/scripts/turn_pairs.py" "$out" "$size" "${names[@]}"
