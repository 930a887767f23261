#!/usr/bin/env bash
# What dreadpool's `tracing` (no subscriber installed) and `metrics` features
# cost in wall time, against issue 3's budgets: tracing at most 2%, metrics
# at most 5% more time per task.
#
# Features are compile-time, so one process cannot hold two builds of
# dreadpool. This builds `spawn_cost` three times (no features, `tracing`,
# `tracing,metrics`), then `ab.py` runs the builds in ABBA turns, ROUNDS
# times per scenario, 2 workers, each run the best of 3 repetitions, and
# prints each feature's cost over the build below it (tracing over none,
# metrics over tracing): the median of the paired per-round ratios, with a
# bootstrap 95% interval. Single runs here spread by 30-50%; pairing the
# builds round by round is what makes a few percent visible.
#
#   dreadpool-bench/scripts/feature-cost.sh [ROUNDS]      (default 60, about 2 minutes)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-60}"
. dreadpool-bench/scripts/feature-builds.sh
feature_builds spawn_cost
python3 dreadpool-bench/scripts/ab.py "$rounds" 'nested fanout external' \
  "none=$out/spawn_cost-none {} 3 2" \
  "tracing=$out/spawn_cost-tracing {} 3 2" \
  "metrics=$out/spawn_cost-metrics {} 3 2"
