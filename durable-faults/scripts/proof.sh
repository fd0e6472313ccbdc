#!/usr/bin/env bash
# Runs the fault harness's proof matrix: every (backend, mutant) pair on the same seeds, plus the
# clean build on those seeds, JOBS campaigns at a time, and appends one TSV row per campaign to
# $OUT/results.tsv (backend, mutant, seed, exit code, violations, violation kinds, ops, check
# time). `summary` prints caught/clean counts per pair from that file. A run resumes: pairs and
# seeds that already have a row are skipped.
#
#   durable-faults/scripts/proof.sh run [PAIRS...]   # PAIRS like redis:lost-ack or sqlite:none
#   durable-faults/scripts/proof.sh summary
#
# Environment: BIN (the durable-faults binary; default: release build in $CARGO_TARGET_DIR),
# OUT (default /tmp/durable-faults-proof), SEEDS (space-separated), SECONDS_EACH (60), JOBS (3).
# Campaigns are independent (each starts its own servers on free ports), so running several at
# once only makes the machine busier, which is part of what the proof is meant to show.
set -euo pipefail

BIN="${BIN:-${CARGO_TARGET_DIR:-target}/release/durable-faults}"
OUT="${OUT:-/tmp/durable-faults-proof}"
SECONDS_EACH="${SECONDS_EACH:-60}"
JOBS="${JOBS:-3}"
SEEDS="${SEEDS:-3118 9071 14560 20311 25877 31024 36688 41925 47350 52813 58106 63492 68770 74015 79561 84803 90257 95512 101764 107029}"
MUTANTS=(redis-no-persistence settle-ignores-fence lease-ignores-clock claim-without-cas lost-ack)
BACKENDS=(redis postgres sqlite)

all_pairs() {
  local backend mutant
  for backend in "${BACKENDS[@]}"; do
    echo "$backend:none"
    for mutant in "${MUTANTS[@]}"; do
      if [ "$mutant" != redis-no-persistence ] || [ "$backend" = redis ]; then
        echo "$backend:$mutant"
      fi
    done
  done
}

# One campaign; prints its TSV row. The out dir is world-readable: the PostgreSQL server runs as
# the postgres user and needs to reach its data directory under it.
run_one() {
  local backend="${1%%:*}" mutant="${1#*:}" seed="$2"
  local dir="$OUT/$backend-$mutant-$seed" log code=0
  rm -rf "$dir" && mkdir -p "$dir" && chmod 755 "$dir"
  log="$dir/campaign.log"
  local args=(--backend "$backend" --seconds "$SECONDS_EACH" --seed "$seed" --out "$dir")
  [ "$mutant" = none ] || args+=(--mutant "$mutant")
  "$BIN" "${args[@]}" >"$log" 2>&1 || code=$?
  # The table row: | backend | ops | effects | faults | violations | indet | unknowns | inconcl | check |
  local row
  row="$(grep -E "^\| $backend \|" "$log" | tail -1 || true)"
  local ops violations check kinds
  ops="$(awk -F'|' '{gsub(/ /,"",$3); print $3}' <<<"$row")"
  violations="$(awk -F'|' '{gsub(/ /,"",$6); print $6}' <<<"$row")"
  check="$(awk -F'|' '{gsub(/^ +| +$/,"",$10); print $10}' <<<"$row")"
  kinds="$(grep -oE 'caught \([^)]*\)' "$log" | sed -E 's/caught \((.*)\)/\1/' | tail -1 || true)"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
    "$backend" "$mutant" "$seed" "$code" "${violations:-?}" "${kinds:--}" "${ops:-?}" "${check:-?}"
}

run_matrix() {
  mkdir -p "$OUT" && chmod 755 "$OUT"
  local pairs=("$@")
  [ ${#pairs[@]} -gt 0 ] || mapfile -t pairs < <(all_pairs)
  export -f run_one
  export BIN OUT SECONDS_EACH
  local pair seed
  touch "$OUT/results.tsv"
  # Resumable: a (pair, seed) with a row already is not run again.
  for seed in $SEEDS; do
    for pair in "${pairs[@]}"; do
      if ! grep -qP "^${pair%%:*}\t${pair#*:}\t$seed\t" "$OUT/results.tsv"; then
        echo "$pair $seed"
      fi
    done
  done | xargs -P "$JOBS" -L 1 bash -c 'run_one "$0" "$1" >> "$OUT/results.tsv"'
}

# Per pair: campaigns, and how many were caught (a mutant) or clean (none), with the check time.
summary() {
  awk -F'\t' '
    { key = $1 ":" $2; n[key]++; seeds[key] = seeds[key] " " $3
      if ($2 == "none") { if ($4 == 0 && $5 == 0) good[key]++ }
      else if ($4 == 0 && $5 > 0) good[key]++
      if ($8 + 0 > worst[key]) worst[key] = $8 + 0 }
    END { for (key in n) printf "%s\t%d/%d\tworst check %.1f s\n", key, good[key], n[key], worst[key] }
  ' "$OUT/results.tsv" | sort
}

case "${1:-run}" in
  run) shift || true; run_matrix "$@" ;;
  summary) summary ;;
  *) echo "usage: $0 run [backend:mutant...] | summary" >&2; exit 2 ;;
esac
