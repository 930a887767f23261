#!/usr/bin/env bash
# Prints the public API of the workspace's library crates, one item a line,
# all features on: run it before and after a change that must not touch the
# API and `diff` the two listings. rustdoc's JSON output is unstable, so this
# asks stable rustdoc for it with RUSTC_BOOTSTRAP (a developer's tool, not a
# build step).
#
#   dreadpool-bench/scripts/public-api.sh > before.txt     (about a minute)
set -euo pipefail
cd "$(dirname "$0")/../.."
target="${CARGO_TARGET_DIR:-target}"
for crate in dreadpool-core dreadpool-metrics dreadpool dreadpool-top; do
  RUSTC_BOOTSTRAP=1 cargo rustdoc --quiet -p "$crate" --lib --all-features -- \
    -Zunstable-options --output-format json
  python3 dreadpool-bench/scripts/public-api.py "$target/doc/${crate//-/_}.json"
done
