#!/usr/bin/env bash
# What dreadpool's `tracing` (no subscriber installed) and `metrics` features
# add per task, in instructions: callgrind counts do not vary with machine
# load the way wall time does, so small costs (a few percent) can be seen.
# Builds `spawn_cost` with no features, `tracing` and `tracing,metrics`, runs
# each scenario once on one worker under callgrind, and prints the whole
# program's instruction count with each feature's cost over the build below.
# `metrics` runs at the default latency sampling (1 in 256), and also at 1 in
# 64 and 0 (timing off).
#
#   dreadpool-bench/scripts/instruction-cost.sh        (about 2 minutes)
set -euo pipefail
cd "$(dirname "$0")/../.."
. dreadpool-bench/scripts/feature-builds.sh
feature_builds spawn_cost
count() { # binary, scenario, [sampling]
  DREADPOOL_BENCH_SAMPLING="${3:-256}" valgrind --tool=callgrind \
    --callgrind-out-file="$out/callgrind.out" "$out/spawn_cost-$1" "$2" 1 1 2>&1 \
    | awk '/refs:/ { gsub(",", "", $NF); print $NF }'
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }'; }
echo "| scenario | no features | tracing | tracing cost | metrics (1 in 256) | metrics cost | metrics, 1 in 64 | metrics, timing off |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for scenario in external nested fanout; do
  none=$(count none "$scenario"); tracing=$(count tracing "$scenario")
  m256=$(count metrics "$scenario" 256); m64=$(count metrics "$scenario" 64); m0=$(count metrics "$scenario" 0)
  echo "| $scenario | $none | $tracing | $(pct "$tracing" "$none") | $m256 | $(pct "$m256" "$tracing") | $(pct "$m64" "$tracing") | $(pct "$m0" "$tracing") |"
done
echo "(instructions for the whole program, one worker, one run; metrics costs are over the tracing build)"
