"""The paired, interleaved comparison that the project's A/B scripts share.

Single runs on this project's shared 2-core machines spread by 30-50%, so a
difference of a few percent cannot be read from one run of each build. The
builds run in turns, ABBA (so that neither always goes first), ROUNDS times
a scenario. Within a round the builds ran seconds apart and met the same
machine, so the round's ratio cancels most drift; the median of the rounds'
ratios, with a bootstrap 95% interval, is the result.

Used by dreadpool-bench/scripts/ab.py (builds of one benchmark binary) and
compat/rayon-bench/ab.py (rayon's rayon-core against dreadpool's).
"""
import random
import statistics
import sys


def alternate(rounds, builds, run_one, scenario):
    """Runs every build `rounds` times on `scenario`, in ABBA order.

    `builds` is a list of (name, build); `run_one(build, scenario)` returns
    one run's time. Returns {name: [time of each round]}, and prints each
    round's times on stderr as it goes.
    """
    times = {name: [] for name, _ in builds}
    for r in range(rounds):
        order = builds if r % 2 == 0 else builds[::-1]
        for name, build in order:
            times[name].append(run_one(build, scenario))
        print(f"{scenario} round {r + 1}/{rounds}: " + " ".join(
            f"{n}={t[-1]:.2f}" for n, t in times.items()), file=sys.stderr)
    return times


def ratios(times, other, base):
    """Each round's ratio `other / base`."""
    return [o / b for o, b in zip(times[other], times[base])]


def interval(values, draws=2000):
    """A bootstrap 95% interval of the median of `values` (seeded: the same
    values give the same interval)."""
    rng = random.Random(1)
    medians = sorted(statistics.median(rng.choices(values, k=len(values)))
                     for _ in range(draws))
    return medians[int(draws * 0.025)], medians[int(draws * 0.975)]
