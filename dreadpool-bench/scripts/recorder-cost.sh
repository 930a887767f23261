#!/usr/bin/env bash
# What the flight recorder (`recorder` feature) costs in wall time, against
# issue 15's budgets: compiled in at its default level (`Scheduler`) at most
# 3% more time per task than without the feature; at `Tasks` level at most
# 1.5x on the nested spawn tree and at most 5 ns per event (two events a
# task: its spawn and its run's begin).
#
# Builds `spawn_cost` without the feature (`tracing`, dreadpool's default)
# and with it (`tracing,recorder`), then `ab.py` runs, in ABBA turns, ROUNDS
# times per scenario, 2 workers: the build without, the build with at its
# default level, the build with at `Tasks` level, that again beside a
# thread that spins (a third thread on two CPUs), and beside a thread taking
# whole recordings back to back instead (issue 15: taking a recording while
# the pool runs flat out must not stall it; the last line's cost is what
# recording takes beyond competing for a CPU). Each is
# compared with the one before it; the `Tasks` line's ratio over `none` is
# its product with the `scheduler` line's. `nested-1us` is the tree with a
# microsecond of work per task (the recorder's budget there: 2%).
#
#   dreadpool-bench/scripts/recorder-cost.sh [ROUNDS]     (default 40)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-40}"
target="${CARGO_TARGET_DIR:-target}"
out="$(mktemp -d)"
cargo build --quiet --release -p dreadpool-bench --bin spawn_cost
cp "$target/release/spawn_cost" "$out/spawn_cost-none"
cargo build --quiet --release -p dreadpool-bench --bin spawn_cost --features recorder
cp "$target/release/spawn_cost" "$out/spawn_cost-recorder"
python3 dreadpool-bench/scripts/ab.py "$rounds" 'nested nested-1us external' \
  "none=$out/spawn_cost-none {} 3 2" \
  "scheduler=env DREADPOOL_BENCH_RECORD=scheduler $out/spawn_cost-recorder {} 3 2" \
  "tasks=env DREADPOOL_BENCH_RECORD=tasks $out/spawn_cost-recorder {} 3 2" \
  "tasks+spinner=env DREADPOOL_BENCH_RECORD=tasks DREADPOOL_BENCH_BESIDE=spin $out/spawn_cost-recorder {} 3 2" \
  "tasks+recordings=env DREADPOOL_BENCH_RECORD=tasks DREADPOOL_BENCH_BESIDE=recordings $out/spawn_cost-recorder {} 3 2"
