#!/usr/bin/env bash
# The benchmark report: runs every bench in Cargo.toml (or those named), collects each
# `BENCHFIG name=… median_ms=… p99_ms=… ref=… ref_median_ms=… target=…` line they print,
# and prints one markdown table. A bench that prints no BENCHFIG line (or fails) is a row that
# says "no figures".
#
#   scripts/bench.sh                 # the whole suite (criterion groups too: long)
#   scripts/bench.sh --figures embed # only the BENCHFIG figures of the embed bench
#   CARGO=/path/to/cargo-wrapper scripts/bench.sh
#
# `ratio` is median / reference median, measured in the same run. `met?` reads the target:
# `<Nms` or `<=Nms` (median), `p99<Nms` (p99), `ratio<=N` (ratio); anything else is reported only.
set -uo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
filter=()
if [[ "${1:-}" == "--figures" ]]; then
  # A criterion filter no benchmark matches: each bench prints its figures, skips its groups.
  filter=(-- '^no criterion group$')
  shift
fi
benches=("$@")
if [[ ${#benches[@]} -eq 0 ]]; then
  mapfile -t benches < <(awk '/^\[\[bench\]\]/{b=1; next} b && /^name *=/{gsub(/[" ]/,"",$0); sub(/name=/,"",$0); print; b=0}' Cargo.toml)
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
silent=()
for b in "${benches[@]}"; do
  echo "==> bench $b" >&2
  if ! "$CARGO" bench --locked --bench "$b" "${filter[@]}" >"$log.out" 2>"$log.err"; then
    echo "    failed; its last lines:" >&2
    tail -5 "$log.err" >&2
  fi
  touch "$log.out"
  if grep -q '^BENCHFIG ' "$log.out"; then
    grep '^BENCHFIG ' "$log.out" >>"$log"
  else
    silent+=("$b")
  fi
done
rm -f "$log.out" "$log.err"

echo "| figure | median ms | p99 ms | reference | ratio | target | met? |"
echo "|---|---|---|---|---|---|---|"
awk '
function field(line, key,   re, m) {
  re = key "=[^ ]*"
  if (match(line, re)) return substr(line, RSTART + length(key) + 1, RLENGTH - length(key) - 1)
  return "-"
}
{
  name = field($0, "name"); med = field($0, "median_ms"); p99 = field($0, "p99_ms")
  ref = field($0, "ref"); refmed = field($0, "ref_median_ms")
  target = "-"; i = index($0, " target="); if (i) target = substr($0, i + 8)
  ratio = "-"
  if (refmed != "-" && refmed + 0 > 0) ratio = sprintf("%.2f", med / refmed)
  refcell = (ref == "-") ? "-" : sprintf("%s %s ms", ref, refmed)
  # Every clause of the target is judged and all must hold: `<Xms` (the median), `<Xms_median`,
  # `<Xms_p99`, `p99<Xms`, `ratio<=X`, `recall@10>=X(k10=Y…)`; a target with none is "-".
  judged = 0; failed = 0; t = target
  while (match(t, /(p99|ratio)?<=?[0-9.]+(ms(_median|_p99)?)?/)) {
    c = substr(t, RSTART, RLENGTH); t = substr(t, RSTART + RLENGTH)
    v = c; gsub(/^(p99|ratio)?<=?|(ms(_median|_p99)?)$/, "", v)
    if (c ~ /^ratio/) { if (ratio == "-") continue; x = ratio }
    else if (c ~ /^p99/ || c ~ /_p99$/) x = p99
    else if (c ~ /ms/) x = med
    else continue
    judged++; if (x + 0 > v + 0) failed++
  }
  if (match(target, /recall@10>=[0-9.]+\(k10=[0-9.]+/)) {
    c = substr(target, RSTART, RLENGTH); v = c; gsub(/^recall@10>=|\(.*$/, "", v); x = c; sub(/^.*k10=/, "", x)
    judged++; if (x + 0 < v + 0) failed++
  }
  met = judged == 0 ? "-" : (failed ? "no" : "yes")
  printf "| %s | %s | %s | %s | %s | %s | %s |\n", name, med, p99, refcell, ratio, target, met
}' "$log"
# A bench that printed no figure (criterion output only, or it failed) still gets its row.
for b in "${silent[@]}"; do
  echo "| $b: no figures | - | - | - | - | - | - |"
done
