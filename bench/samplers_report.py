#!/usr/bin/env python3
"""The comparison table of bench/samplers.sh, from the per-trial CSVs in FOLDER."""
import csv
import math
import random
import statistics
import sys
from collections import defaultdict


def load(path):
    runs = defaultdict(lambda: defaultdict(list))  # (impl, sampler, objective) -> seed -> rows
    for r in csv.DictReader(open(path)):
        runs[(r["impl"], r["sampler"], r["objective"])][int(r["seed"])].append(r)
    return runs


def median_curve(seeds):
    budget = min(len(rows) for rows in seeds.values())
    return [statistics.median(float(rows[t]["best"]) for rows in seeds.values()) for t in range(budget)]


def bootstrap_median_interval(values, resamples=2000, rng=random.Random(0)):
    meds = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples))
    return meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]


def rank_sum_p(a, b):
    """Two-sided p-value of the Mann-Whitney U test (normal approximation, ties averaged): whether two
    sets of final values come from one distribution."""
    pooled = sorted((v, i) for i, v in enumerate(a + b))
    ranks = [0.0] * len(pooled)
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[pooled[k][1]] = (i + j) / 2 + 1
        i = j + 1
    n, m = len(a), len(b)
    u = sum(ranks[:n]) - n * (n + 1) / 2
    sd = math.sqrt(n * m * (n + m + 1) / 12)
    return math.erfc(abs(u - n * m / 2) / sd / math.sqrt(2)) if sd > 0 else 1.0


def finals(seeds):
    return [float(rows[-1]["best"]) for rows in seeds.values()]


def first_reaching(curve, target):
    return next((t + 1 for t, v in enumerate(curve) if v <= target), None)


def ms_per_trial(seeds, last=None):
    times = [float(r["ask_seconds"]) for rows in seeds.values() for r in (rows[-last:] if last else rows)]
    return 1000 * statistics.mean(times)


def main():
    folder = sys.argv[1]
    runs = load(f"{folder}/nexp.csv")
    runs.update(load(f"{folder}/optuna.csv"))
    objectives = sorted({k[2] for k in runs})
    with open(f"{folder}/curves.csv", "w") as f:
        f.write("impl,sampler,objective,trial,median_best\n")
        for key in sorted(runs):
            for t, v in enumerate(median_curve(runs[key])):
                f.write(f"{key[0]},{key[1]},{key[2]},{t},{v:.10g}\n")
    head = ("objective", "seeds", "trials", "nexp tpe", "optuna tpe", "optuna 95% CI", "within", "trials ratio",
            "p same", "nexp tpe 3.1.0 density", "p same", "optuna tpe scaled density", "nexp random", "optuna random", "ms/trial nexp", "ms/trial optuna")
    rows = []
    for obj in objectives:
        nt, ot = runs[("nexp", "tpe", obj)], runs[("optuna", "tpe", obj)]
        nc, oc = median_curve(nt), median_curve(ot)
        lo, hi = bootstrap_median_interval([float(rows[-1]["best"]) for rows in ot.values()])
        target = oc[-1]
        n_reach, o_reach = first_reaching(nc, target), first_reaching(oc, target)
        ratio = f"{n_reach / o_reach:.2f}" if n_reach else f">{len(nc) / o_reach:.2f}"
        rnd = lambda impl: median_curve(runs[(impl, "random", obj)])[-1]
        compat = runs.get(("nexp", "tpe_optuna310", obj))
        scaled = runs.get(("optuna", "tpe_scaled", obj))
        rows.append((obj, str(len(nt)), str(len(nc)), f"{nc[-1]:.4g}", f"{oc[-1]:.4g}", f"[{lo:.4g}, {hi:.4g}]",
                     "yes" if nc[-1] <= hi else "NO", ratio, f"{rank_sum_p(finals(nt), finals(ot)):.2g}",
                     f"{median_curve(compat)[-1]:.4g}" if compat else "",
                     f"{rank_sum_p(finals(compat), finals(ot)):.2g}" if compat else "",
                     f"{median_curve(scaled)[-1]:.4g}" if scaled else "",
                     f"{rnd('nexp'):.4g}", f"{rnd('optuna'):.4g}",
                     f"{ms_per_trial(nt):.3f}", f"{ms_per_trial(ot):.3f}"))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    for r in [head] + rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
    print("\nmedian best value after the budget (lower is better); 'within': nexp TPE's median is inside or below "
          "Optuna TPE's 95% bootstrap interval of its median; 'trials ratio': trials nexp TPE's median curve needs to "
          "reach Optuna TPE's final median, over Optuna's own; 'nexp tpe 3.1.0 density': nexp's TPE with the kernel "
          "density Optuna 3.1.0 computes (each kernel's -log sigma left out); 'optuna tpe scaled density': Optuna's TPE "
          "with that term put back (nexp's default density); 'p same': two-sided p-value of the Mann-Whitney test of the "
          "final values over seeds against Optuna TPE's (small: the two differ)")
    cma = [obj for obj in objectives if ("nexp", "cmaes", obj) in runs and ("optuna", "cmaes", obj) in runs]
    if cma:
        print("\nCMA-ES (median best after the budget; Optuna's CmaEsSampler with its defaults, 95% bootstrap interval)")
        print(f"{'objective':>16}  {'nexp cmaes':>10}  {'optuna cmaes':>12}  {'optuna 95% CI':>20}  within  "
              f"{'ms/trial nexp':>13}  {'ms/trial optuna':>15}")
        for obj in cma:
            n, o = runs[("nexp", "cmaes", obj)], runs[("optuna", "cmaes", obj)]
            nc, oc = median_curve(n), median_curve(o)
            lo, hi = bootstrap_median_interval([float(rows[-1]["best"]) for rows in o.values()])
            print(f"{obj:>16}  {nc[-1]:10.4g}  {oc[-1]:12.4g}  {f'[{lo:.4g}, {hi:.4g}]':>20}  "
                  f"{'yes' if nc[-1] <= hi else 'NO':>6}  {ms_per_trial(n):13.3f}  {ms_per_trial(o):15.3f}")
    try:
        n200, o200 = load(f"{folder}/nexp_200.csv"), load(f"{folder}/optuna_200.csv")
        nt, ot = n200[("nexp", "tpe", "branin")], o200[("optuna", "tpe", "branin")]
        print(f"\nsampler time per trial, TPE on branin, 200 trials ({len(nt)} seeds): nexp {ms_per_trial(nt):.3f} ms "
              f"(last 10 trials {ms_per_trial(nt, 10):.3f} ms), Optuna {ms_per_trial(ot):.3f} ms "
              f"(last 10 trials {ms_per_trial(ot, 10):.3f} ms)")
    except (OSError, KeyError, statistics.StatisticsError):
        pass


if __name__ == "__main__":
    main()
