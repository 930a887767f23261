#!/usr/bin/env bash
# Issue 26's checks on a many-core machine that has no Rust toolchain: build
# the binaries here, carry them there, run them there in one call.
#
#   dreadpool-bench/scripts/sixteen-cores.sh build DIR
#       Release builds into DIR: `compare` (default features), `compare-rec`
#       (`metrics,recorder`: the recorder's `Tasks` level as a contender) and
#       `structure` (`metrics,recorder`: it reads the counters and events).
#   dreadpool-bench/scripts/sixteen-cores.sh run DIR [OUTDIR]
#       Runs them at 16 threads and across 2,4,8,16, each part under its own
#       time limit (a part that overruns is cut, the rest still runs), writing
#       one Markdown file per part to OUTDIR (default: $OUT, else ./sixteen).
#       About 8 minutes on a quiet 16-core machine.
#   dreadpool-bench/scripts/sixteen-cores.sh build-windows DIR
#       Adds `compare-w4` and `compare-w16`: `compare` with the fork-join
#       latent window at 4 and at 16 forks instead of 8 (`--cfg
#       dreadpool_latent_window`, `fork_join/forks.rs`), each in a target
#       folder of its own, since the flag rebuilds every crate.
#   dreadpool-bench/scripts/sixteen-cores.sh windows DIR [OUTDIR]
#       The fork-join rows at 16 threads with windows of 8, 4, 16, 8, 4, 16
#       (two runs each, in turns), one file per run: the comparison that
#       BENCHMARKS.md's "The latent window" leaves to a many-core machine.
#       A second call, after `run`: each part is limited to 45 s, 6 in all.
#   dreadpool-bench/scripts/sixteen-cores.sh shards DIR [OUTDIR]
#       The global queue in 1, 4, 8 and 16 shards (`compare --global-shards`,
#       no other build needed): `producers` (16 threads spawning at once,
#       and one alone) and `external` at 16 threads, the four in turns, three
#       rounds; the sweep 2,4,8,16 of external, fan-out and producers with
#       1 and 8 shards; then `structure` of producers and external at 16
#       workers for each count. One file per run, each limited to 60 s (18
#       in all; 23 s on 2 CPUs).
#   dreadpool-bench/scripts/sixteen-cores.sh build-coarse DIR
#       Adds `compare-share1` and `structure-share1`: `compare` and
#       `structure` with the earlier fork-sharing wake (`--cfg
#       dreadpool_share_wakes_one`: a share wakes nobody while anyone
#       searches, `sleep/mod.rs`); and `compare-nospin` and
#       `structure-nospin`, with joiners that sleep at once instead of
#       looking again first (`--cfg dreadpool_join_spin_off`,
#       `worker/join_spin.rs`); each pair in a target folder of its own.
#   dreadpool-bench/scripts/sixteen-cores.sh coarse DIR [OUTDIR]
#       The fork-join rows at 16 threads with the build of now, the earlier
#       sharing wake and joiners that do not spin, in turns, three rounds,
#       then `structure nqueens` at 2, 4, 8 and 16 workers with each: the
#       comparisons that BENCHMARKS.md's "Coarse fork-join: wakes in
#       parallel" and "A joiner looks again before it sleeps" leave to a
#       many-core machine. 12 parts of at most 45 s.
#   dreadpool-bench/scripts/sixteen-cores.sh build-park DIR
#       Adds `compare-blocking` and `structure-blocking`: sleepers that never
#       spin before they block (`--cfg dreadpool_park_no_spin`,
#       `sleep/parker.rs`; the default spins after a short park), in a
#       target folder of their own.
#   dreadpool-bench/scripts/sixteen-cores.sh park DIR [OUTDIR]
#       External, fan-out, producers and the wake latency across 2,4,8,16
#       with `compare-blocking` and `compare` in turns, two rounds, then
#       `structure --threads 2,16` with each: whether the spawner's cheaper
#       wakes hold on many cores, and cost an idle pool's wake nothing.
#       6 parts of at most 90 s.
#   dreadpool-bench/scripts/sixteen-cores.sh build-recorder DIR
#       Adds `compare-rec-line`: `compare-rec` with an identity slot per
#       cache line (`--cfg dreadpool_identity_slot_line`,
#       `recorder/identity_slots.rs`).
#   dreadpool-bench/scripts/sixteen-cores.sh recorder DIR [OUTDIR]
#       The recorder's `Tasks` level on external spawns and the nested tree
#       at 16 threads, with `compare-rec` and `compare-rec-line` in turns,
#       three rounds: 6 parts of at most 45 s.
#   dreadpool-bench/scripts/sixteen-cores.sh build-allocator DIR
#       Adds `libmimalloc.so`: Debian's mimalloc (package libmimalloc2.0,
#       fetched with `apt-get download`, not installed), to preload in
#       glibc's place.
#   dreadpool-bench/scripts/sixteen-cores.sh allocator DIR [OUTDIR]
#       External, producers and fan-out at 16 threads, dreadpool and rayon,
#       with glibc's allocator and with mimalloc preloaded, in turns, three
#       rounds: whether the lock of glibc's arena, on which the outside
#       spawner blocks on 2 CPUs (BENCHMARKS.md, "Where the spawner blocks"),
#       costs anything on 16 cores, and so whether a global queue that
#       reuses its blocks is worth building. Each mimalloc part first checks
#       that the library loads (a preload that fails is ignored silently)
#       and prints mimalloc's statistics to its `.err`. 6 parts of at most
#       45 s.
#   dreadpool-bench/scripts/sixteen-cores.sh build-all DIR
#       `build`, `build-coarse`, `build-park`, `build-recorder`,
#       `build-windows` and `build-allocator` into DIR (about 30 MB).
#   dreadpool-bench/scripts/sixteen-cores.sh device DIR OUTDIR SECONDS [SECTION...]
#       The sections named (default: run, coarse, allocator, park, recorder,
#       shards and windows, in that order of priority) within SECONDS: each part gets
#       its own limit or what is left, whichever is less, and once less than
#       30 s is left the remaining parts are skipped and listed in
#       OUTDIR/skipped.txt. So one call of a device session (at most 600 s)
#       returns whatever finished, most important first, and a second call
#       names what was skipped.
#
# With a device session's 15 minutes (machine start included): `build-all`
# here, then `device DIR $OUT 570` in one call and, with what is left,
# `device DIR $OUT SECONDS SECTION...` for the sections it skipped.
#
# DIR must be ignored by git (a folder named in .git/info/exclude) so that it
# can travel as an ignored path. `--quiet-wait 0`: the machine is lent whole.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"

build() {
  local dir
  dir="$(mkdir -p "$1" && cd "$1" && pwd)"
  cd "$root"
  local target="${CARGO_TARGET_DIR:-$root/target}"
  cargo build --quiet --release -p dreadpool-bench --bin compare
  cp "$target"/release/compare "$dir/compare"
  cargo build --quiet --release -p dreadpool-bench --features metrics,recorder --bin compare --bin structure
  cp "$target"/release/compare "$dir/compare-rec"
  cp "$target"/release/structure "$dir/structure"
  ls -l "$dir"
}

# build_variant DIR CFG FOLDER BIN NAME [cargo args...]: BIN built with
# `--cfg CFG` in a target folder of its own (the flag rebuilds every crate),
# copied to DIR/NAME.
build_variant() {
  local dir="$1" cfg="$2" folder="$3" bin="$4" name="$5"
  shift 5
  local target="${CARGO_TARGET_DIR:-$root/target}"
  (cd "$root" && RUSTFLAGS="${RUSTFLAGS:-} --cfg $cfg" CARGO_TARGET_DIR="$target/$folder" \
    cargo build --quiet --release -p dreadpool-bench --bin "$bin" "$@")
  cp "$target/$folder/release/$bin" "$dir/$name"
}

build_windows() {
  local dir window
  dir="$(mkdir -p "$1" && cd "$1" && pwd)"
  for window in 4 16; do
    build_variant "$dir" "dreadpool_latent_window=\"$window\"" "window-$window" compare "compare-w$window"
  done
  ls -l "$dir"
}

# build_pair DIR CFG FOLDER SUFFIX: `compare` and `structure` built with
# `--cfg CFG` in FOLDER, as DIR/compare-SUFFIX and DIR/structure-SUFFIX.
build_pair() {
  local dir="$1" cfg="$2" folder="$3" suffix="$4"
  build_variant "$dir" "$cfg" "$folder" compare "compare-$suffix"
  build_variant "$dir" "$cfg" "$folder" structure "structure-$suffix" --features metrics,recorder
}

build_coarse() {
  local dir
  dir="$(mkdir -p "$1" && cd "$1" && pwd)"
  build_pair "$dir" dreadpool_share_wakes_one share-one share1
  build_pair "$dir" dreadpool_join_spin_off join-spin-off nospin
  ls -l "$dir"
}

# The end of `device`'s time, in seconds since the epoch (none: no end).
deadline=""

# output_folder [OUTDIR]: where a section writes (OUTDIR, else $OUT, else
# ./sixteen), made if missing.
output_folder() {
  out="${1:-${OUT:-./sixteen}}"
  mkdir -p "$out"
}

part() { # seconds, name, command...: one part, cut at its limit
  local limit="$1" name="$2"
  shift 2
  if [[ -n "$deadline" ]]; then
    local left=$((deadline - $(date +%s)))
    if ((left < 30)); then
      echo "$name" >>"$out/skipped.txt"
      echo "== $name skipped: ${left}s left" >&2
      return 0
    fi
    if ((limit > left)); then limit="$left"; fi
  fi
  echo "== $name ($(date -u +%H:%M:%S), limit ${limit}s): $*" >&2
  if ! timeout "$limit" "$@" >"$out/$name.md" 2>"$out/$name.err"; then
    echo "   $name ended early or failed (exit $?), see $name.err" >&2
  fi
}

run() {
  local dir="$1"
  output_folder "${2:-}"
  { nproc; lscpu | grep -E 'Model name|Socket|NUMA node\(s\)|Thread\(s\) per core'; uptime; } >"$out/machine.txt"
  # The spawner's scaling, 2 -> 16 workers, against the peers.
  part 200 sweep "$dir/compare" --sweep 2,4,8,16 --reps 3 --quiet-wait 0 \
    --contenders dreadpool,rayon,threadpool,tokio external fanout nested producers
  # Fork-join and compute efficiency at 16 threads.
  part 90 forkjoin "$dir/compare" --threads 16 --reps 5 --quiet-wait 0 forkjoin compute
  # The recorder's `Tasks` level on external spawns.
  part 60 recorder "$dir/compare-rec" --threads 16 --reps 3 --quiet-wait 0 \
    --contenders dreadpool,dreadpool-tasks external nested
  # The structural counts behind the times; then at `compare`'s size (a
  # million tasks a run), where BENCHMARKS.md's model of the spawner's wakes
  # was never checked.
  part 90 structure "$dir/structure" --threads 2,16 --reps 10
  part 60 structure-million "$dir/structure" --threads 2,16 --tasks 1000000 --reps 3 \
    external producers
  ls -l "$out" >&2
}

windows() {
  local dir="$1"
  output_folder "${2:-}"
  forkjoin_rounds "$dir" 2 forkjoin compare compare-w4 compare-w16
  ls -l "$out" >&2
}

# forkjoin_rounds DIR ROUNDS PREFIX BINARY...: the fork-join rows at 16
# threads with each binary in turn, ROUNDS times, one part (and file) a run.
forkjoin_rounds() {
  local dir="$1" rounds="$2" prefix="$3"
  shift 3
  local round binary
  for round in $(seq "$rounds"); do
    for binary in "$@"; do
      part 45 "$prefix-$binary-$round" "$dir/$binary" --threads 16 --reps 5 --quiet-wait 0 forkjoin
    done
  done
}

coarse() {
  local dir="$1"
  output_folder "${2:-}"
  local binary
  forkjoin_rounds "$dir" 3 coarse compare compare-share1 compare-nospin
  for binary in structure structure-share1 structure-nospin; do
    part 45 "coarse-$binary" "$dir/$binary" --threads 2,4,8,16 --reps 10 nqueens
  done
  ls -l "$out" >&2
}

shards() {
  local dir="$1"
  output_folder "${2:-}"
  local round count
  for round in 1 2 3; do
    for count in 1 4 8 16; do
      part 60 "shards-$count-$round" "$dir/compare" --threads 16 --reps 5 --quiet-wait 0 \
        --global-shards "$count" --contenders dreadpool producers external
    done
  done
  for count in 1 8; do
    part 60 "sweep-shards-$count" "$dir/compare" --sweep 2,4,8,16 --reps 3 --quiet-wait 0 \
      --global-shards "$count" --contenders dreadpool external fanout producers
  done
  for count in 1 4 8 16; do
    part 60 "structure-shards-$count" "$dir/structure" --threads 16 --reps 5 \
      --global-shards "$count" producers external
  done
  ls -l "$out" >&2
}

build_park() {
  local dir
  dir="$(mkdir -p "$1" && cd "$1" && pwd)"
  build_pair "$dir" dreadpool_park_no_spin park-no-spin blocking
  ls -l "$dir"
}

park() {
  local dir="$1"
  output_folder "${2:-}"
  local round binary
  for round in 1 2; do
    for binary in compare-blocking compare; do
      part 90 "park-$binary-$round" "$dir/$binary" --sweep 2,4,8,16 --reps 3 --quiet-wait 0 \
        --wake-samples 3000 --contenders dreadpool,rayon external fanout producers wake
    done
  done
  for binary in structure-blocking structure; do
    part 90 "park-$binary" "$dir/$binary" --threads 2,16 --reps 10 external fanout producers
  done
  ls -l "$out" >&2
}

build_recorder() {
  local dir
  dir="$(mkdir -p "$1" && cd "$1" && pwd)"
  build_variant "$dir" dreadpool_identity_slot_line slot-line compare compare-rec-line \
    --features metrics,recorder
  ls -l "$dir"
}

recorder() {
  local dir="$1"
  output_folder "${2:-}"
  local round binary
  for round in 1 2 3; do
    for binary in compare-rec compare-rec-line; do
      part 45 "recorder-$binary-$round" "$dir/$binary" --threads 16 --reps 5 --quiet-wait 0 \
        --contenders dreadpool,dreadpool-tasks external nested
    done
  done
  ls -l "$out" >&2
}

build_allocator() {
  local dir scratch
  dir="$(mkdir -p "$1" && cd "$1" && pwd)"
  scratch="$(mktemp -d)"
  (cd "$scratch" && apt-get download libmimalloc2.0 >/dev/null && dpkg-deb -x ./*.deb unpacked)
  cp "$(find "$scratch/unpacked" -name 'libmimalloc.so.*' -type f | head -n 1)" "$dir/libmimalloc.so"
  rm -rf "$scratch"
  mimalloc_loads "$dir/libmimalloc.so" || {
    echo "build-allocator: $dir/libmimalloc.so does not load as a preload" >&2
    exit 1
  }
  ls -l "$dir"
}

# mimalloc_loads LIB: whether LIB, preloaded, runs (mimalloc says so when
# verbose); ld.so only warns about a preload it cannot load, and goes on.
mimalloc_loads() {
  LD_PRELOAD="$1" MIMALLOC_VERBOSE=1 /bin/true 2>&1 | grep -q '^mimalloc: '
}

allocator() {
  local dir="$1"
  output_folder "${2:-}"
  local lib="$dir/libmimalloc.so" round
  if ! mimalloc_loads "$lib"; then
    echo "allocator: $lib is missing or does not load; run build-allocator" | tee "$out/allocator.err" >&2
    return 0
  fi
  for round in 1 2 3; do
    part 45 "allocator-glibc-$round" "$dir/compare" --threads 16 --reps 5 --quiet-wait 0 \
      --contenders dreadpool,rayon external producers fanout
    # Preloaded into `compare` alone (through env, under `timeout`); its
    # statistics at exit go to the part's `.err`, the proof it was in use.
    part 45 "allocator-mimalloc-$round" env LD_PRELOAD="$lib" MIMALLOC_SHOW_STATS=1 \
      "$dir/compare" --threads 16 --reps 5 --quiet-wait 0 --contenders dreadpool,rayon \
      external producers fanout
  done
  ls -l "$out" >&2
}

build_all() {
  build "$1"
  build_coarse "$1"
  build_park "$1"
  build_recorder "$1"
  build_windows "$1"
  build_allocator "$1"
}

device() {
  local dir="$1" seconds="$3" section
  out="$2"
  shift 3
  local sections=("$@")
  ((${#sections[@]})) || sections=(run coarse allocator park recorder shards windows)
  for section in "${sections[@]}"; do
    case "$section" in
      run | coarse | allocator | park | recorder | shards | windows) ;;
      *) echo "device: no section '$section' (run, coarse, allocator, park, recorder, shards, windows)" >&2; exit 2 ;;
    esac
  done
  mkdir -p "$out"
  deadline=$(($(date +%s) + seconds))
  for section in "${sections[@]}"; do
    "$section" "$dir" "$out"
  done
}

case "${1:-}" in
  build) build "${2:?build needs a folder}" ;;
  build-all) build_all "${2:?build-all needs a folder}" ;;
  device) device "${2:?device needs the folder of the binaries}" "${3:?and an output folder}" \
    "${4:?and the seconds it may take}" "${@:5}" ;;
  build-windows) build_windows "${2:?build-windows needs a folder}" ;;
  build-coarse) build_coarse "${2:?build-coarse needs a folder}" ;;
  build-park) build_park "${2:?build-park needs a folder}" ;;
  park) park "${2:?park needs the folder of the binaries}" "${3:-}" ;;
  build-recorder) build_recorder "${2:?build-recorder needs a folder}" ;;
  build-allocator) build_allocator "${2:?build-allocator needs a folder}" ;;
  allocator) allocator "${2:?allocator needs the folder of the binaries}" "${3:-}" ;;
  recorder) recorder "${2:?recorder needs the folder of the binaries}" "${3:-}" ;;
  run) run "${2:?run needs the folder of the binaries}" "${3:-}" ;;
  windows) windows "${2:?windows needs the folder of the binaries}" "${3:-}" ;;
  shards) shards "${2:?shards needs the folder of the binaries}" "${3:-}" ;;
  coarse) coarse "${2:?coarse needs the folder of the binaries}" "${3:-}" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
esac
