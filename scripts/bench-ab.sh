#!/usr/bin/env bash
# One criterion benchmark on a base commit and on the work tree, back to back in one
# invocation, alternating which goes first: the machine is shared and noisy, so figures are
# only compared within one run (BENCHMARKS.md). Builds both outside any lock; run the whole
# script under `flock /tmp/yarn-am-it.lock` when the figures matter.
#
#   scripts/bench-ab.sh [--base 899236c] [--bench update_step] [--rounds 2] [-- CRITERION ARGS]
#   e.g. scripts/bench-ab.sh --base 899236c -- "grouped_.*/10000"
#
# The base is exported (`git archive`) into $BENCH_AB_DIR/src-BASE (default
# /tmp/yarn-am-bench-ab) and built in its own target dir, $BENCH_AB_TARGET (default
# $BENCH_AB_DIR/target; the first build compiles every dependency, a few minutes): cargo
# gives both trees' bench binaries the same name, so one target dir would rebuild them in
# turn. Prints each run's criterion output, then one line per run and case.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE=899236c BENCH=update_step ROUNDS=2
while (($#)); do
  case "$1" in
    --base) BASE=$2; shift 2 ;;
    --bench) BENCH=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "unknown option $1 (--base --bench --rounds -- CRITERION ARGS)" >&2; exit 2 ;;
  esac
done
DIR=${BENCH_AB_DIR:-/tmp/yarn-am-bench-ab}
TARGET=${BENCH_AB_TARGET:-$DIR/target}
SRC="$DIR/src-$BASE"
if [[ ! -d "$SRC" ]]; then
  mkdir -p "$SRC.tmp"
  git -C "$HERE" archive "$BASE" | tar -x -C "$SRC.tmp"
  mv "$SRC.tmp" "$SRC"
fi
# The bench binary of a tree (built if needed).
binary() { # tree target
  (cd "$1" && CARGO_TARGET_DIR=$2 cargo bench --bench "$BENCH" --no-run --message-format=json -q) |
    jq -r 'select(.executable != null and .target.kind == ["bench"]) | .executable' | tail -1
}
base_bin=$(binary "$SRC" "$TARGET")
head_bin=$(binary "$HERE" "${CARGO_TARGET_DIR:-$HERE/target}")
[[ -x "$base_bin" && -x "$head_bin" ]] || { echo "no bench binary built" >&2; exit 1; }
# A copy, so that a build meanwhile cannot replace either binary mid-run.
cp "$base_bin" "$DIR/$BENCH-base"
cp "$head_bin" "$DIR/$BENCH-head"

summary=()
for round in $(seq 1 "$ROUNDS"); do
  order=(base head)
  if ((round % 2 == 0)); then order=(head base); fi
  for which in "${order[@]}"; do
    echo "== round $round: $which ($([[ $which == base ]] && echo "$BASE" || echo "work tree"))"
    out=$("$DIR/$BENCH-$which" --bench "$@" 2>&1 | tee /dev/stderr)
    # "update_step/grouped_default/10000" then "time:   [low mean high]".
    while read -r line; do summary+=("round $round $which $line"); done < <(
      awk '/^[a-z_]+\/[^ ]+$/ { name = $1 } /time:/ { print name, $4, $5 }' <<<"$out")
  done
done
echo "== means (round, tree, case, criterion mean)"
printf '%s\n' "${summary[@]}"
