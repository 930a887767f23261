#!/usr/bin/env python3
"""rayon-bench built twice, with crates.io's rayon-core and with dreadpool's,
run in turns (ABBA), each scenario's time ratio reported with an interval.

One binary cannot hold both rayon-cores, so there are two builds of the same
program: standalone copies of this package (its own `[workspace]`, its own
target dir), the second with `[patch.crates-io] rayon-core = { path = ... }`.
Single runs on the shared 2-core machine spread by tens of percent, so, as
dreadpool-bench/scripts/ab.py does, the builds run in turns, ABBA, ROUNDS
times a scenario; each run prints the best of its repetitions; a round's
ratio (dreadpool / rayon) cancels most drift, and the median of the rounds'
ratios with a bootstrap 95% interval is the result.

  ab.py [--rounds N] [--reps N] [--rayon-core PATH] [--aa] [SCENARIO ...]

--rayon-core: dreadpool's rayon-core (default: ../rayon-core beside this
folder). --aa: both builds with crates.io's rayon-core (an A/A run: the
ratios show the noise floor). Builds go under $CARGO_TARGET_DIR/rayon-bench-ab
(default /tmp/rayon-bench-ab). Prints a Markdown table on stdout, progress on
stderr; exits 1 if a build or run fails.
"""
import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Targets from issue 27: at most 1.0x rayon's time, fine-grained ones 0.8x.
FINE_GRAINED = {"sum", "map_collect", "par_bridge"}


def build(name, root, patch):
    """A standalone copy of this package, built in release; its binary."""
    copy = root / name
    if copy.exists():
        shutil.rmtree(copy / "src")
    copy.mkdir(parents=True, exist_ok=True)
    shutil.copytree(HERE / "src", copy / "src")
    manifest = (HERE / "Cargo.toml").read_text()
    manifest += "\n# Added by ab.py: a workspace of its own.\n[workspace]\n"
    if patch:
        manifest += f'\n[patch.crates-io]\nrayon-core = {{ path = "{patch}" }}\n'
    (copy / "Cargo.toml").write_text(manifest)
    env = dict(os.environ, CARGO_TARGET_DIR=str(root / f"target-{name}"))
    print(f"building {name} ...", file=sys.stderr)
    subprocess.run(["cargo", "build", "--release", "--quiet",
                    "--manifest-path", str(copy / "Cargo.toml")], check=True, env=env)
    # Which rayon-core the build resolved: a patch cargo could not use is
    # only a warning, so check that it was.
    pkgid = subprocess.run(["cargo", "pkgid", "--manifest-path", str(copy / "Cargo.toml"),
                            "rayon-core"], check=True, env=env, capture_output=True,
                           text=True).stdout.strip()
    if bool(patch) != pkgid.startswith("path+"):
        sys.exit(f"ab.py: build {name} resolved rayon-core as {pkgid}, expected "
                 f"{'the patch ' + str(patch) if patch else 'crates.io'}")
    print(f"  {name}: rayon-core {pkgid}", file=sys.stderr)
    return Path(env["CARGO_TARGET_DIR"]) / "release" / "rayon-bench"


def run(binary, scenario, reps):
    out = subprocess.run([str(binary), scenario, str(reps)], check=True,
                         capture_output=True, text=True).stdout
    match = re.search(r"best ([0-9.]+) ms", out)
    if not match:
        sys.exit(f"ab.py: no 'best X ms' in the output of {binary} {scenario}: {out!r}")
    return float(match.group(1))


def interval(ratios, draws=2000):
    rng = random.Random(1)
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios)))
                     for _ in range(draws))
    return medians[int(draws * 0.025)], medians[int(draws * 0.975)]


def verdict(scenario, low, high):
    target = 0.8 if scenario in FINE_GRAINED else 1.0
    if high <= target:
        return target, "meets"
    if low > target:
        return target, "misses"
    return target, "unclear"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--rayon-core", type=Path, default=HERE.parent / "rayon-core")
    parser.add_argument("--aa", action="store_true")
    parser.add_argument("scenarios", nargs="*")
    args = parser.parse_args()

    root = Path(os.environ.get("CARGO_TARGET_DIR", "/tmp")) / "rayon-bench-ab"
    rayon = build("rayon", root, None)
    if args.aa:
        other_name, other = "rayon-again", build("rayon-again", root, None)
    else:
        core = args.rayon_core.resolve()
        if not (core / "Cargo.toml").exists():
            sys.exit(f"ab.py: no rayon-core at {core} (give --rayon-core, or --aa)")
        other_name, other = "dreadpool", build("dreadpool", root, core)
    builds = [("rayon", rayon), (other_name, other)]
    scenarios = args.scenarios or subprocess.run(
        [str(rayon), "--list"], check=True, capture_output=True, text=True).stdout.split()

    print(f"| scenario | rayon ms | {other_name} ms | ratio | 95% interval | target | "
          f"verdict | rounds |")
    print("|---|---:|---:|---:|---|---:|---|---:|")
    for scenario in scenarios:
        times = {name: [] for name, _ in builds}
        for r in range(args.rounds):
            order = builds if r % 2 == 0 else builds[::-1]
            for name, binary in order:
                times[name].append(run(binary, scenario, args.reps))
            print(f"{scenario} round {r + 1}/{args.rounds}: " + " ".join(
                f"{n}={t[-1]:.2f}" for n, t in times.items()), file=sys.stderr)
        ratios = [o / b for o, b in zip(times[other_name], times["rayon"])]
        low, high = interval(ratios)
        target, word = verdict(scenario, low, high)
        print(f"| {scenario} | {statistics.median(times['rayon']):.2f} | "
              f"{statistics.median(times[other_name]):.2f} | "
              f"{statistics.median(ratios):.2f} | {low:.2f} to {high:.2f} | "
              f"{target:.1f} | {word} | {args.rounds} |", flush=True)


main()
