# Sourced by the feature-cost scripts: builds one bench binary three times,
# with no dreadpool features, with `tracing` (the default) and with
# `tracing,metrics`, as "$out/BIN-none", "$out/BIN-tracing" and
# "$out/BIN-metrics" (features are compile-time, so one process cannot hold
# two builds of dreadpool). Sets `out` to a fresh directory.
#
#   feature_builds BIN
feature_builds() {
  local bin="$1" target="${CARGO_TARGET_DIR:-target}"
  out="$(mktemp -d)"
  local name flags
  for name in none tracing metrics; do
    case "$name" in
      none) flags=(--no-default-features) ;;
      tracing) flags=() ;;
      metrics) flags=(--features metrics) ;;
    esac
    cargo build --quiet --release -p dreadpool-bench --bin "$bin" "${flags[@]}"
    cp "$target/release/$bin" "$out/$bin-$name"
  done
}
