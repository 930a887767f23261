#!/usr/bin/env bash
# What dreadpool's `tracing` (no subscriber installed) and `metrics` features
# cost, issue 6's last targets: tracing at most 2%, metrics at most 5%.
#
# Features are compile-time, so one process cannot hold two builds of
# dreadpool. This builds the `compare` binary three times (no features,
# `tracing`, `tracing,metrics`), then runs the three builds in turns, ROUNDS
# times, each on the spawn-heavy scenarios with dreadpool alone, and prints
# each build's median ns/task and its cost over the featureless build.
#
#   dreadpool-bench/scripts/feature-cost.sh [ROUNDS]      (default 5)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-5}"
. dreadpool-bench/scripts/feature-builds.sh
feature_builds compare
scenarios=(external nested fanout)
for round in $(seq "$rounds"); do
  for name in none tracing metrics; do
    echo "round $round/$rounds: $name" >&2
    "$out/compare-$name" --contenders dreadpool --reps 3 --quiet-wait 30 "${scenarios[@]}" 2>/dev/null \
      | awk -F'|' -v b="$name" '/^\| (external|nested|fan-out)/ { split($2, w, ":"); gsub(/ /, "", $4); print b, w[1], $4 }' \
      >> "$out/samples"
  done
done
awk '
  { k = $1 " " $2; v[k, ++n[k]] = $3; scen[$2] = 1 }
  function median(key,   i, j, t, m, a) {
    m = n[key]; for (i = 1; i <= m; i++) a[i] = v[key, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    printf "| scenario | no features (ns/task) | tracing (ns/task) | tracing cost | tracing+metrics (ns/task) | metrics cost |\n|---|---:|---:|---:|---:|---:|\n"
    for (s in scen) {
      base = median("none " s); tr = median("tracing " s); me = median("metrics " s)
      printf "| %s | %.1f | %.1f | %+.1f%% | %.1f | %+.1f%% |\n", s, base, tr, (tr / base - 1) * 100, me, (me / tr - 1) * 100
    }
  }' "$out/samples"
echo "(median of $rounds rounds of 3 repetitions; metrics cost is relative to the tracing build; raw samples in $out/samples)"
