#!/usr/bin/env bash
# Instructions per join, under callgrind: `join_cost` (fib by `join` on one
# worker, release) at N = 22 and N = 27, the difference in instructions over
# the difference in joins (the pool's start and stop cancel out). Counts do
# not vary with machine load, so a change of one instruction a join shows.
#
#   dreadpool-bench/scripts/join-instructions.sh [REV ...]
#
# Measures the working tree, then each REV (a git revision, built in a
# temporary worktree with this tree's join_cost.rs copied in, so that both
# run the same program). About a minute a build, warm.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
small=22 big=27
per_join() { # binary -> instructions per join
  local counts=() joins=()
  for n in "$small" "$big"; do
    local out
    out="$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$n" 2>&1)"
    counts+=("$(awk '/refs:/ { gsub(",", "", $NF); print $NF }' <<<"$out")")
    joins+=("$(sed -n 's/.*, \([0-9]*\) joins,.*/\1/p' <<<"$out")")
  done
  awk -v a="${counts[0]}" -v b="${counts[1]}" -v j="${joins[0]}" -v k="${joins[1]}" \
    'BEGIN { printf "%.2f", (b - a) / (k - j) }'
}
build() { # tree, target dir -> path of the binary
  (cd "$1" && CARGO_TARGET_DIR="$2" cargo build --quiet --release -p dreadpool-bench --bin join_cost)
  echo "$2/release/join_cost"
}
echo "| build | instructions per join |"
echo "|---|---:|"
echo "| working tree | $(per_join "$(build "$root" "${CARGO_TARGET_DIR:-$root/target}")") |"
for rev in "$@"; do
  tree="$(mktemp -d)"
  git -C "$root" worktree add --quiet --detach "$tree" "$rev"
  cp "$root/dreadpool-bench/src/bin/join_cost.rs" "$tree/dreadpool-bench/src/bin/"
  echo "| $rev ($(git -C "$root" rev-parse --short "$rev")) | $(per_join "$(build "$tree" "$tree/target")") |"
  git -C "$root" worktree remove --force "$tree"
done
