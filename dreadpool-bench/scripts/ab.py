#!/usr/bin/env python3
"""Paired, interleaved wall-time comparison of builds of one benchmark binary.

Single runs on this project's shared 2-core machines spread by 30-50%, so a
cost of a few percent cannot be read from one run of each build. This runs
the builds in turns (ABBA order, so neither always goes first), ROUNDS times
per scenario; each run prints the best of its repetitions (ns/task). Within
a round the builds ran seconds apart and met the same machine, so the
round's ratio cancels most drift; the median of those ratios, with a
bootstrap 95% interval, is the cost.

  ab.py ROUNDS 'SCENARIO ...' BASE=CMD OTHER=CMD [OTHER=CMD ...]

CMD is a command line in which `{}` stands for the scenario; it must print
`best X` with X in ns/task, as `spawn_cost` does. Every build is compared
with the one before it (none, tracing, metrics: each feature's own cost).
"""
import random
import re
import shlex
import statistics
import subprocess
import sys


def run(cmd, scenario):
    out = subprocess.run([a.replace('{}', scenario) for a in shlex.split(cmd)], check=True,
                         capture_output=True, text=True).stdout
    match = re.search(r"best ([0-9.]+)", out)
    if not match:
        sys.exit(f"no 'best X' in the output of {cmd} {scenario}: {out!r}")
    return float(match.group(1))


def interval(ratios, draws=2000):
    rng = random.Random(1)
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios)))
                     for _ in range(draws))
    return medians[int(draws * 0.025)], medians[int(draws * 0.975)]


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    rounds, scenarios = int(sys.argv[1]), sys.argv[2].split()
    builds = [arg.split("=", 1) for arg in sys.argv[3:]]
    print("| scenario | build | ns/task | over | ns/task | cost | 95% interval | rounds |")
    print("|---|---|---:|---|---:|---:|---|---:|")
    for scenario in scenarios:
        times = {name: [] for name, _ in builds}
        for r in range(rounds):
            order = builds if r % 2 == 0 else builds[::-1]
            for name, cmd in order:
                times[name].append(run(cmd, scenario))
            print(f"{scenario} round {r + 1}/{rounds}: " + " ".join(
                f"{n}={t[-1]:.1f}" for n, t in times.items()), file=sys.stderr)
        for (base, _), (name, _) in zip(builds, builds[1:]):
            ratios = [o / b for o, b in zip(times[name], times[base])]
            low, high = interval(ratios)
            print(f"| {scenario} | {name} | {statistics.median(times[name]):.1f} | "
                  f"{base} | {statistics.median(times[base]):.1f} | "
                  f"{(statistics.median(ratios) - 1) * 100:+.1f}% | "
                  f"{(low - 1) * 100:+.1f}% to {(high - 1) * 100:+.1f}% | {rounds} |")


main()
