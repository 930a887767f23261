#!/usr/bin/env python3
"""rayon-bench built twice, with crates.io's rayon-core and with dreadpool's,
run in turns (ABBA), each scenario's time ratio reported with an interval.

One binary cannot hold both rayon-cores, so there are two builds of the same
program: standalone copies of this package (its own `[workspace]`, its own
target dir), the second with `[patch.crates-io] rayon-core = { path = ... }`.
The builds run in turns, ABBA, ROUNDS times a scenario, as
dreadpool-bench/scripts/ab.py does, with the same core (abba.py there):
each run prints the best of its repetitions; the median of the rounds'
ratios (dreadpool / rayon), with a bootstrap 95% interval, is the result.

  ab.py [--rounds N] [--reps N] [--rayon-core PATH] [--aa] [--no-pool] [SCENARIO ...]

--rayon-core: dreadpool's rayon-core (default: ../rayon-core beside this
folder). --aa: both builds with crates.io's rayon-core (an A/A run: the
ratios show the noise floor). --no-pool: a third turn in each round, the
same work on plain threads with no pool (`rayon-bench --no-pool`, for the
scenarios that have that form), and its ratio to rayon: a bound on what any
pool could give there. Builds go under $CARGO_TARGET_DIR/rayon-bench-ab
(default /tmp/rayon-bench-ab). Prints a Markdown table on stdout, progress on
stderr; exits 1 if a build or run fails.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "dreadpool-bench" / "scripts"))
from abba import alternate, interval, ratios  # noqa: E402  (the path above)

# Targets from issue 27: at most 1.0x rayon's time, fine-grained ones 0.8x.
FINE_GRAINED = {"sum", "map_collect", "par_bridge", "join_tree", "max_len_1"}


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


def run(build, scenario, reps):
    binary, *extra = build
    out = subprocess.run([str(binary), scenario, str(reps), *extra], check=True,
                         capture_output=True, text=True).stdout
    match = re.search(r"best ([0-9.]+) ms", out)
    if not match:
        sys.exit(f"ab.py: no 'best X ms' in the output of {binary} {scenario}: {out!r}")
    return float(match.group(1))


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
    parser.add_argument("--no-pool", action="store_true")
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
    builds = [("rayon", (rayon,)), (other_name, (other,))]
    scenarios = args.scenarios or subprocess.run(
        [str(rayon), "--list"], check=True, capture_output=True, text=True).stdout.split()

    no_pool = set()
    if args.no_pool:
        for scenario in scenarios:
            probe = subprocess.run([str(rayon), scenario, "1", "--no-pool"],
                                   capture_output=True, text=True)
            if probe.returncode == 0:
                no_pool.add(scenario)
    extra_head = " no-pool ms | no-pool / rayon |" if args.no_pool else ""
    print(f"| scenario | rayon ms | {other_name} ms | ratio | 95% interval | target | "
          f"verdict | rounds |{extra_head}")
    print("|---|---:|---:|---:|---|---:|---|---:|" + ("---:|---|" if args.no_pool else ""))
    for scenario in scenarios:
        these = builds + ([("no-pool", (rayon, "--no-pool"))] if scenario in no_pool else [])
        times = alternate(args.rounds, these,
                          lambda build, s: run(build, s, args.reps), scenario)
        per_round = ratios(times, other_name, "rayon")
        low, high = interval(per_round)
        target, word = verdict(scenario, low, high)
        print(f"| {scenario} | {statistics.median(times['rayon']):.2f} | "
              f"{statistics.median(times[other_name]):.2f} | "
              f"{statistics.median(per_round):.2f} | {low:.2f} to {high:.2f} | "
              f"{target:.1f} | {word} | {args.rounds} |" + bound(times, args), flush=True)


def bound(times, args):
    """The no-pool columns: its time and its ratio to rayon's, with the
    ratio's interval (blank where the scenario has no no-pool form)."""
    if not args.no_pool:
        return ""
    if "no-pool" not in times:
        return " | |"
    per_round = ratios(times, "no-pool", "rayon")
    low, high = interval(per_round)
    return (f" {statistics.median(times['no-pool']):.2f} | "
            f"{statistics.median(per_round):.2f} ({low:.2f} to {high:.2f}) |")


main()
