#!/usr/bin/python3
"""nexp's moead plugin against DEAP, side by side in one run.

Both sides run the same algorithms on the same problem: GSEMO and MOEA/D (Tchebycheff, n+1 uniform
weights, replacement over all subproblems, z = best values seen) on LOTZ with bit-string length n,
standard bit mutation with rate 1/n (DEAP: tools.mutFlipBit), the same evaluation budget, no
archive, one thread, stopping when the population holds the whole front. DEAP's side is written
with DEAP's creator, toolbox, clone, mutFlipBit and Fitness.dominates, the way its users write it.

Prints evaluations per second and seconds to cover the front for both, and their ratios; writes a CSV.

    /usr/bin/python3 bench/moead_deap.py [--n 32] [--runs 5] [--nexp build/nexp] [--csv runs/bench/moead_deap.csv]
"""
import argparse
import csv
import glob
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

try:
    from deap import base, creator, tools
except ImportError:
    sys.exit("DEAP is not installed for /usr/bin/python3: apt-get install python3-deap")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------- DEAP side

def lotz(ind):
    n = len(ind)
    lo = 0
    while lo < n and ind[lo]:
        lo += 1
    tz = 0
    while tz < n and not ind[n - 1 - tz]:
        tz += 1
    return float(lo), float(tz)


def make_toolbox(n):
    if not hasattr(creator, "LotzFitness"):
        creator.create("LotzFitness", base.Fitness, weights=(1.0, 1.0))
        creator.create("LotzIndividual", list, fitness=creator.LotzFitness)
    tb = base.Toolbox()
    tb.register("bit", random.randint, 0, 1)
    tb.register("individual", tools.initRepeat, creator.LotzIndividual, tb.bit, n)
    tb.register("evaluate", lotz)
    tb.register("mutate", tools.mutFlipBit, indpb=1.0 / n)
    return tb


def covers(population, n):
    return len({ind.fitness.values for ind in population if sum(ind.fitness.values) == n}) == n + 1


def deap_gsemo(n, budget, seed):
    random.seed(seed)
    tb = make_toolbox(n)
    first = tb.individual()
    first.fitness.values = tb.evaluate(first)
    pop, evals, done = [first], 1, False
    while evals < budget and not done:
        child = tb.clone(random.choice(pop))
        tb.mutate(child)
        child.fitness.values = tb.evaluate(child)
        evals += 1
        if any(p.fitness.dominates(child.fitness) for p in pop):
            continue
        pop = [p for p in pop if not (child.fitness.dominates(p.fitness) or p.fitness.values == child.fitness.values)]
        pop.append(child)
        done = covers(pop, n)  # only after the population changed
    return evals, covers(pop, n)


def deap_moead_tch(n, budget, seed):
    random.seed(seed)
    tb = make_toolbox(n)
    count = n + 1
    weights = [(j / (count - 1), 1 - j / (count - 1)) for j in range(count)]
    pop = [tb.individual() for _ in range(count)]
    for ind in pop:
        ind.fitness.values = tb.evaluate(ind)
    evals = count
    z = [max(ind.fitness.values[k] for ind in pop) for k in range(2)]

    def g(values, w):
        return max(w[0] * (z[0] - values[0]), w[1] * (z[1] - values[1]))

    done = covers(pop, n)
    while evals < budget and not done:
        for j in range(count):
            child = tb.clone(pop[j])
            tb.mutate(child)
            child.fitness.values = tb.evaluate(child)
            evals += 1
            z = [max(z[k], child.fitness.values[k]) for k in range(2)]
            replaced = False
            for k in range(count):
                if g(child.fitness.values, weights[k]) <= g(pop[k].fitness.values, weights[k]):
                    pop[k] = child
                    replaced = True
            done = replaced and covers(pop, n)  # only after the population changed
            if evals >= budget or done:
                break
    return evals, covers(pop, n)


def run_deap(kind, n, budget, runs, seed0):
    fn = deap_gsemo if kind == "gsemo" else deap_moead_tch
    rows = []
    for r in range(runs):
        t0 = time.perf_counter()
        evals, ok = fn(n, budget, seed0 + r)
        rows.append({"evaluations": evals, "covered": ok, "seconds": time.perf_counter() - t0})
    return rows


# ---------------------------------------------------------------- nexp side

def find_nexp(explicit):
    if explicit:
        return explicit
    for c in [os.path.join(ROOT, "build", "nexp")] + sorted(glob.glob(os.path.join(ROOT, "build-*", "nexp"))):
        if os.access(c, os.X_OK):
            return c
    return "nexp"


def run_nexp(nexp, kind, n, budget, runs, seed, runs_dir):
    method = ["method=moead.gsemo"] if kind == "gsemo" else ["method=moead.classic", "params.decomposition=tch"]
    cmd = [nexp, "run", os.path.join(ROOT, "configs/moead/cover.yaml"), *method, f"dataset.n={n}",
           "dataset.distortion=identity", f"params.budget={budget}", f"params.replicas={runs}",
           "params.archive=false", "threads=1", f"seed={seed}", f"runs_dir={runs_dir}"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"nexp failed ({' '.join(cmd)}):\n{out.stderr[-2000:]}")
    folder = next(line.split()[-1] for line in out.stdout.splitlines() if line.startswith("run: "))
    rows = []
    with open(os.path.join(folder, "artifacts", "runs.csv")) as f:
        for rec in csv.DictReader(f):
            rows.append({"evaluations": int(rec["evaluations"]), "covered": int(rec["evaluations_to_front"]) >= 0,
                         "seconds": float(rec["seconds"])})
    return rows


# ---------------------------------------------------------------- report

def summarize(rows):
    evals = sum(r["evaluations"] for r in rows)
    secs = sum(r["seconds"] for r in rows)
    covered = [r for r in rows if r["covered"]]
    return {
        "runs": len(rows),
        "covered": len(covered),
        "evals_per_second": evals / secs if secs > 0 else float("nan"),
        "median_evaluations_to_front": statistics.median(r["evaluations"] for r in covered) if covered else -1,
        "mean_seconds_to_front": statistics.mean(r["seconds"] for r in covered) if covered else float("nan"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--runs", type=int, default=5, help="DEAP runs per algorithm (nexp runs 20x as many)")
    ap.add_argument("--budget", type=int, default=0, help="evaluations per run; 0: n^4")
    ap.add_argument("--nexp", default="")
    ap.add_argument("--csv", default=os.path.join(ROOT, "runs", "bench", "moead_deap.csv"))
    args = ap.parse_args()
    budget = args.budget or args.n ** 4
    nexp = find_nexp(args.nexp)
    results = []
    with tempfile.TemporaryDirectory() as runs_dir:
        for kind in ["gsemo", "moead_tch"]:
            d = summarize(run_deap(kind, args.n, budget, args.runs, 1))
            x = summarize(run_nexp(nexp, kind, args.n, budget, 20 * args.runs, 1, runs_dir))
            results.append((kind, d, x))

    print(f"LOTZ n={args.n}, standard bit mutation 1/n, budget {budget} evaluations, one thread, no archive")
    print(f"{'algorithm':<10} {'impl':<5} {'runs':>5} {'covered':>8} {'evals/s':>12} {'median evals':>13} "
          f"{'s to front':>11}")
    rows = []
    for kind, d, x in results:
        for impl, s in (("deap", d), ("nexp", x)):
            print(f"{kind:<10} {impl:<5} {s['runs']:>5} {s['covered']:>8} {s['evals_per_second']:>12.4g} "
                  f"{s['median_evaluations_to_front']:>13} {s['mean_seconds_to_front']:>11.4g}")
            rows.append({"algorithm": kind, "impl": impl, "n": args.n, "budget": budget, **s})
        speed = x["evals_per_second"] / d["evals_per_second"]
        front = d["mean_seconds_to_front"] / x["mean_seconds_to_front"]
        print(f"{kind:<10} ratio nexp/deap: {speed:.0f}x evaluations per second, {front:.0f}x faster to cover the front")
        rows.append({"algorithm": kind, "impl": "ratio", "n": args.n, "budget": budget,
                     "evals_per_second": speed, "mean_seconds_to_front": front})
    os.makedirs(os.path.dirname(args.csv), exist_ok=True)
    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["algorithm", "impl", "n", "budget", "runs", "covered", "evals_per_second",
                                          "median_evaluations_to_front", "mean_seconds_to_front"])
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.csv}")


if __name__ == "__main__":
    main()
