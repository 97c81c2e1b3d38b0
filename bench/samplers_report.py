#!/usr/bin/env python3
"""The comparison table of bench/samplers.sh, from the per-trial CSVs in FOLDER; with --pareto, the
NSGA-II table of bench/samplers_pareto.sh (hypervolume, distance to the true front).

    samplers_report.py FOLDER
    samplers_report.py --pareto FOLDER
"""
import csv
import math
import random
import statistics
import sys
from collections import defaultdict

# The two-objective problems' reference points and true fronts (bench/samplers_objectives.hpp).
REFERENCE_POINTS = {"zdt1": (1.1, 11.0), "zdt2": (1.1, 11.0), "fonseca_fleming": (1.1, 1.1)}
FF_C = 1 / math.sqrt(3)
FRONTS = {  # a front point for each s in [0, 1]
    "zdt1": lambda s: (s, 1 - math.sqrt(s)),
    "zdt2": lambda s: (s, 1 - s * s),
    "fonseca_fleming": lambda s: (1 - math.exp(-3 * ((2 * s - 1) * FF_C - FF_C) ** 2),
                                  1 - math.exp(-3 * ((2 * s - 1) * FF_C + FF_C) ** 2)),
}


def nondominated(points):
    """The points no other point dominates (both objectives minimised), by f1 ascending; one of duplicates."""
    out, ceiling = [], math.inf
    for p in sorted(points):
        if p[1] < ceiling:
            out.append(p)
            ceiling = p[1]
    return out


def hypervolume_2d(points, reference):
    """The area the points dominate inside the box below `reference`, exact: the staircase of the
    non-dominated points, one band per point (as samplers::hypervolume_2d in nexp)."""
    area, ceiling = 0.0, reference[1]
    for f1, f2 in nondominated(p for p in points if p[0] < reference[0] and p[1] < reference[1]):
        area += (reference[0] - f1) * (ceiling - f2)
        ceiling = f2
    return area


def igd(points, problem, n=1000):
    """Inverted generational distance: the mean, over n front points evenly spaced in s, of the
    Euclidean distance to the nearest non-dominated trial."""
    front = nondominated(points)
    return statistics.mean(min(math.dist(FRONTS[problem](k / (n - 1)), p) for p in front) for k in range(n))


def load(path, task="objective"):
    runs = defaultdict(lambda: defaultdict(list))  # (impl, sampler, objective or problem) -> seed -> rows
    for r in csv.DictReader(open(path)):
        runs[(r["impl"], r["sampler"], r[task])][int(r["seed"])].append(r)
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


def print_table(head, rows):
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    for r in [head] + rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))


def ms_per_trial(seeds, last=None):
    times = [float(r["ask_seconds"]) for rows in seeds.values() for r in (rows[-last:] if last else rows)]
    return 1000 * statistics.mean(times)


def pareto_report(folder):
    runs = load(f"{folder}/nexp_pareto.csv", "problem")
    runs.update(load(f"{folder}/optuna_pareto.csv", "problem"))
    problems = sorted({k[2] for k in runs}, key=list(REFERENCE_POINTS).index)
    head = ("problem", "seeds", "trials", "reference", "front HV", "nexp nsga2", "optuna nsga2", "optuna 95% CI", "within",
            "trials ratio", "p same", "IGD nexp", "IGD optuna", "p same", "nexp, 3.1.0 selection", "p same", "IGD",
            "nexp random", "optuna random", "ms/trial nexp", "ms/trial optuna")
    rows, mismatch = [], 0.0
    for prob in problems:
        ref = REFERENCE_POINTS[prob]
        front_hv = hypervolume_2d([FRONTS[prob](k / 99999) for k in range(100000)], ref)
        final = {}  # (impl, sampler) -> (hypervolumes, IGDs) of the seeds' final fronts
        for (impl, sampler, p), seeds in runs.items():
            if p != prob:
                continue
            hvs, igds = [], []
            for rows_of_seed in seeds.values():
                pts = [(float(r["f1"]), float(r["f2"])) for r in rows_of_seed]
                hvs.append(hypervolume_2d(pts, ref))
                igds.append(igd(pts, prob))
                mismatch = max(mismatch, abs(hvs[-1] - float(rows_of_seed[-1]["hypervolume"])))
            final[(impl, sampler)] = (hvs, igds)
        n_hv, n_igd = final[("nexp", "nsga2")]
        o_hv, o_igd = final[("optuna", "nsga2")]
        lo, hi = bootstrap_median_interval(o_hv)
        # Median hypervolume so far (its negative, so that median_curve's "lower is better" reads right).
        curve = lambda impl: [-v for v in median_curve({s: [{"best": -float(r["hypervolume"])} for r in rows]
                                                       for s, rows in runs[(impl, "nsga2", prob)].items()})]
        nc, oc = curve("nexp"), curve("optuna")
        target = oc[-1]
        n_reach = next((t + 1 for t, v in enumerate(nc) if v >= target), None)
        o_reach = next(t + 1 for t, v in enumerate(oc) if v >= target)
        ratio = f"{n_reach / o_reach:.2f}" if n_reach else f">{len(nc) / o_reach:.2f}"
        rnd = lambda impl: f"{statistics.median(final[(impl, 'random')][0]):.4f}" if (impl, "random") in final else ""
        v_hv, v_igd = final.get(("nexp", "nsga2_optuna310"), (None, None))
        rows.append((prob, str(len(n_hv)), str(len(nc)), f"({ref[0]:g}, {ref[1]:g})", f"{front_hv:.4f}",
                     f"{statistics.median(n_hv):.4f}", f"{statistics.median(o_hv):.4f}", f"[{lo:.4f}, {hi:.4f}]",
                     "yes" if statistics.median(n_hv) >= lo else "NO", ratio, f"{rank_sum_p(n_hv, o_hv):.2g}",
                     f"{statistics.median(n_igd):.4f}", f"{statistics.median(o_igd):.4f}", f"{rank_sum_p(n_igd, o_igd):.2g}",
                     f"{statistics.median(v_hv):.4f}" if v_hv else "", f"{rank_sum_p(v_hv, o_hv):.2g}" if v_hv else "",
                     f"{statistics.median(v_igd):.4f}" if v_igd else "", rnd("nexp"), rnd("optuna"),
                     f"{ms_per_trial(runs[('nexp', 'nsga2', prob)]):.3f}", f"{ms_per_trial(runs[('optuna', 'nsga2', prob)]):.3f}"))
    print_table(head, rows)
    print("\nmedian over seeds of the hypervolume of all the trials' non-dominated set after the budget (higher is "
          "better), exact by sorting, to the reference point shown; 'front HV': the true front's (100000 points); "
          "'within': nexp's median is inside or above Optuna NSGAIISampler's 95% bootstrap interval of its median; "
          "'trials ratio': trials nexp's median hypervolume curve needs to reach Optuna's final median, over Optuna's "
          "own; 'p same': two-sided Mann-Whitney p-value of the seeds' final values; IGD: mean distance from 1000 "
          "true-front points to the nearest non-dominated trial (lower is better), median over seeds; 'nexp, 3.1.0 "
          "selection': nexp's NSGA-II choosing parents as Optuna 3.1.0 does (nsga2_optuna310), its p against Optuna "
          "and its IGD; random: the "
          "median hypervolume of each side's random sampler; ms/trial: the NSGA-II sampler's own time per trial")
    print(f"largest difference between a side's own final hypervolume (its CSV) and this script's: {mismatch:.3g}")


def main():
    if sys.argv[1] == "--pareto":
        return pareto_report(sys.argv[2])
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
    print_table(head, rows)
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
