#!/usr/bin/env python3
"""Paired, interleaved wall-time comparison of builds of one benchmark binary.

The builds run in turns, ABBA, ROUNDS times per scenario (abba.py beside
this file says why); each run prints the best of its repetitions (ns/task);
the median of the rounds' ratios, with a bootstrap 95% interval, is the cost.

  ab.py ROUNDS 'SCENARIO ...' BASE=CMD OTHER=CMD [OTHER=CMD ...]

CMD is a command line in which `{}` stands for the scenario; it must print
`best X` with X in ns/task, as `spawn_cost` does. Every build is compared
with the one before it (none, tracing, metrics: each feature's own cost).
"""
import re
import shlex
import statistics
import subprocess
import sys

from abba import alternate, interval, ratios


def run(cmd, scenario):
    out = subprocess.run([a.replace('{}', scenario) for a in shlex.split(cmd)], check=True,
                         capture_output=True, text=True).stdout
    match = re.search(r"best ([0-9.]+)", out)
    if not match:
        sys.exit(f"no 'best X' in the output of {cmd} {scenario}: {out!r}")
    return float(match.group(1))


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    rounds, scenarios = int(sys.argv[1]), sys.argv[2].split()
    builds = [arg.split("=", 1) for arg in sys.argv[3:]]
    print("| scenario | build | ns/task | over | ns/task | cost | 95% interval | rounds |")
    print("|---|---|---:|---|---:|---:|---|---:|")
    for scenario in scenarios:
        times = alternate(rounds, builds, run, scenario)
        for (base, _), (name, _) in zip(builds, builds[1:]):
            per_round = ratios(times, name, base)
            low, high = interval(per_round)
            print(f"| {scenario} | {name} | {statistics.median(times[name]):.1f} | "
                  f"{base} | {statistics.median(times[base]):.1f} | "
                  f"{(statistics.median(per_round) - 1) * 100:+.1f}% | "
                  f"{(low - 1) * 100:+.1f}% to {(high - 1) * 100:+.1f}% | {rounds} |")


main()
