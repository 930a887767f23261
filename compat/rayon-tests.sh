#!/usr/bin/env bash
# Runs rayon's own test suites against dreadpool's rayon-core (compat/rayon-core):
#
# 1. rayon 1.12.0's unit and integration tests (its published source, from
#    crates.io, with `[patch.crates-io] rayon-core = { path = compat/rayon-core }`
#    added to its manifest: exactly what a user's one-line switch does);
# 2. rayon-core 1.13.0's own tests/ directory (its public-API tests), built
#    against compat/rayon-core.
#
# Needs only cargo and access to crates.io. Every test that is not run is
# named in SKIPS below, with its reason (compat/README.md says more), and
# skipped by name: nothing is left out silently.
#
# Environment:
#   RAYON_TESTS_DIR   where the sources are copied and built
#                     (default: $CARGO_TARGET_DIR/rayon-compat, or
#                     compat/target/rayon-compat)
#   RAYON_TESTS_DOC=0 leave out rayon's doc tests (246 of them; they take
#                     about 90 s of the run, each being compiled on its own)
set -euo pipefail

compat="$(cd "$(dirname "$0")" && pwd)"
work="${RAYON_TESTS_DIR:-${CARGO_TARGET_DIR:-$compat/target}/rayon-compat}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
# One target directory for both suites, kept between runs: a warm run
# rebuilds only what changed in compat/rayon-core.
export CARGO_TARGET_DIR="$work/target"
# rayon's doc tests are not ours to hold to -D warnings (CI sets it).
unset RUSTDOCFLAGS

# The tests not run, by exact name, with why (none at present; add a name
# here with its reason, and in compat/README.md):
SKIPS=()
skip_args=()
for name in "${SKIPS[@]}"; do
  skip_args+=(--skip "$name")
  echo "rayon-tests: skipping $name (see compat/README.md)"
done

step() { printf '\n--- rayon-tests: %s (%ss)\n' "$*" "$SECONDS"; }

step "fetching rayon 1.12.0 and rayon-core 1.13.0 from crates.io"
fetch="$work/fetch"
mkdir -p "$fetch/src"
cat >"$fetch/Cargo.toml" <<'TOML'
[package]
name = "rayon-sources"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
rayon = "=1.12.0"
rayon-core = "=1.13.0"

[workspace]
TOML
: >"$fetch/src/lib.rs"
cargo fetch --manifest-path "$fetch/Cargo.toml" --quiet
# Where cargo unpacked them (cargo metadata knows; no guessing of the
# registry's directory name).
metadata="$(cargo metadata --manifest-path "$fetch/Cargo.toml" --format-version 1)"
source_of() { # package-version
  grep -o "\"manifest_path\":\"[^\"]*/$1/Cargo.toml\"" <<<"$metadata" | head -n1 | cut -d'"' -f4 | xargs dirname
}
rayon_src="$(source_of rayon-1.12.0)"
rayon_core_src="$(source_of rayon-core-1.13.0)"
[ -d "$rayon_src" ] && [ -d "$rayon_core_src" ] || { echo "rayon sources not found"; exit 1; }

step "rayon 1.12.0, patched onto compat/rayon-core"
patch="
# Added by compat/rayon-tests.sh: the switch a user makes.
[patch.crates-io]
rayon-core = { path = \"$compat/rayon-core\" }

# A workspace of its own, wherever the copy lies.
[workspace]"
# A copy patched the same way is reused as it is (a warm run then rebuilds
# only what depends on compat/rayon-core's changes); otherwise it is made
# afresh, with the registry's timestamps kept.
if ! [ -f "$work/rayon/.compat-patch" ] || [ "$(cat "$work/rayon/.compat-patch")" != "$patch" ]; then
  rm -rf "$work/rayon"
  cp -Rp "$rayon_src" "$work/rayon"
  chmod -R u+w "$work/rayon"
  printf '%s\n' "$patch" >>"$work/rayon/Cargo.toml"
  printf '%s' "$patch" >"$work/rayon/.compat-patch"
fi
# dreadpool's dependencies at the versions the compat workspace locks
# (cargo adds what rayon needs besides).
[ -f "$work/rayon/Cargo.lock" ] || cp "$compat/Cargo.lock" "$work/rayon/Cargo.lock"
# The patch must have taken: rayon-core must come from compat/, not crates.io.
tree="$(cargo tree --manifest-path "$work/rayon/Cargo.toml" -e normal -i rayon-core)"
head -n1 <<<"$tree"
grep -q "^rayon-core v1.13.0 ($compat/rayon-core)" <<<"$tree" || {
  echo "the patch did not replace rayon-core"; exit 1; }

results="$work/results.txt"
: >"$results"
run_tests() { # manifest, cargo test arguments...
  local manifest="$1" log="$work/log.txt"
  shift
  set +e
  cargo test --manifest-path "$manifest" "$@" 2>&1 | tee "$log"
  local status="${PIPESTATUS[0]}"
  set -e
  grep "^test result:" "$log" >>"$results" || true
  return "$status"
}

run_tests "$work/rayon/Cargo.toml" --lib --tests -- "${skip_args[@]}"
if [ "${RAYON_TESTS_DOC:-1}" = 1 ]; then
  step "rayon 1.12.0 doc tests"
  run_tests "$work/rayon/Cargo.toml" --doc -- "${skip_args[@]}"
fi

step "rayon-core 1.13.0's tests/, against compat/rayon-core"
core_tests="$work/rayon-core-tests"
mkdir -p "$core_tests/src"
rm -rf "$core_tests/tests"
cp -Rp "$rayon_core_src/tests" "$core_tests/tests"
chmod -R u+w "$core_tests"
[ -f "$core_tests/src/lib.rs" ] || : >"$core_tests/src/lib.rs"
cat >"$core_tests/Cargo.toml.new" <<TOML
[package]
name = "rayon-core-tests"
version = "0.0.0"
edition = "2021"
publish = false

[dev-dependencies]
rayon-core = { path = "$compat/rayon-core" }
# rayon-core 1.13.0's own dev-dependencies and the crossbeam-utils its
# tests use.
crossbeam-utils = "0.8"
rand = "0.9"
rand_xorshift = "0.4"
scoped-tls = "1.0"
[target.'cfg(unix)'.dev-dependencies]
libc = "0.2"

[workspace]
TOML
# Rewritten only when it changed, so that a warm run does not rebuild.
cmp -s "$core_tests/Cargo.toml.new" "$core_tests/Cargo.toml" || mv "$core_tests/Cargo.toml.new" "$core_tests/Cargo.toml"
rm -f "$core_tests/Cargo.toml.new"
[ -f "$core_tests/Cargo.lock" ] || cp "$compat/Cargo.lock" "$core_tests/Cargo.lock"
run_tests "$core_tests/Cargo.toml" --tests -- "${skip_args[@]}"

step "summary"
passed=0 failed=0 ignored=0
while read -r line; do
  p=$(grep -oE '[0-9]+ passed' <<<"$line" | cut -d' ' -f1)
  f=$(grep -oE '[0-9]+ failed' <<<"$line" | cut -d' ' -f1)
  i=$(grep -oE '[0-9]+ ignored' <<<"$line" | cut -d' ' -f1)
  passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0})) ignored=$((ignored + ${i:-0}))
done <"$results"
echo "rayon-tests: $passed passed, $failed failed, $ignored ignored (by the tests themselves), ${#SKIPS[@]} skipped by name: ${SKIPS[*]}"
[ "$failed" -eq 0 ]
