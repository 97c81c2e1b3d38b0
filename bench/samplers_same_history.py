#!/usr/bin/env python3
"""TPE's next proposal from the same history, nexp against Optuna 3.1, as distributions over seeds.

A history of HISTORY trials (Optuna's TPE, seed 0) is given to both sides; each side then proposes the
next trial once per seed (SEEDS seeds). Were the two the same algorithm, each parameter's proposals
would follow one distribution: printed are the quartiles on each side and the two-sample
Kolmogorov-Smirnov statistic with its asymptotic p-value (ties of integer and categorical parameters
make it conservative), for nexp's TPE with its default density and with Optuna 3.1.0's.

    samplers_same_history.py NEXP_SAMPLER_BENCH FOLDER [SEEDS] [HISTORY] [OBJECTIVE ...]
"""
import csv
import math
import os
import subprocess
import sys

import optuna

from samplers_optuna import OBJECTIVES

CHOICES = {"c": ["a", "b", "c"]}  # the categorical parameter of `mixed`, as indices on nexp's side


def internal(name, value):
    return CHOICES[name].index(value) if name in CHOICES else value


def ks(a, b):
    """Two-sample Kolmogorov-Smirnov statistic and its asymptotic p-value."""
    a, b = sorted(a), sorted(b)
    i = j = 0
    d = 0.0
    while i < len(a) and j < len(b):
        x = min(a[i], b[j])
        while i < len(a) and a[i] <= x:
            i += 1
        while j < len(b) and b[j] <= x:
            j += 1
        d = max(d, abs(i / len(a) - j / len(b)))
    ne = len(a) * len(b) / (len(a) + len(b))
    lam = (math.sqrt(ne) + 0.12 + 0.11 / math.sqrt(ne)) * d
    if lam < 0.3:  # the series converges slowly here, and Q(0.3) = 1 to 9 digits
        return d, 1.0
    p = 2 * sum((-1) ** (k - 1) * math.exp(-2 * k * k * lam * lam) for k in range(1, 101))
    return d, min(max(p, 0.0), 1.0)


def quartiles(v):
    v = sorted(v)
    return [v[int(q * (len(v) - 1))] for q in (0.25, 0.5, 0.75)]


def main():
    bench, folder = sys.argv[1], sys.argv[2]
    seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    n_history = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    names = sys.argv[5:] or list(OBJECTIVES)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    os.makedirs(folder, exist_ok=True)
    print(f"TPE's proposal for trial {n_history + 1} after the same {n_history} trials, {seeds} seeds per side")
    print(f"{'objective':>16} {'param':>5} {'optuna quartiles':>28} {'nexp quartiles':>28} {'KS':>6} {'p':>7}"
          f" {'nexp 3.1.0 density quartiles':>28} {'KS':>6} {'p':>7}")
    for name in names:
        f = OBJECTIVES[name]
        history = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=0))
        history.optimize(lambda t: f(t, 0, t.number), n_trials=n_history)
        params = list(history.trials[0].params)
        path = os.path.join(folder, f"history_{name}.csv")
        with open(path, "w") as out:
            out.write(",".join(params + ["value"]) + "\n")
            for t in history.trials:
                out.write(",".join(repr(float(internal(p, t.params[p]))) for p in params) + f",{t.value!r}\n")
        theirs = {p: [] for p in params}
        for seed in range(seeds):
            study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
            study.add_trials(history.trials)
            trial = study.ask()
            f(trial, 0, n_history)
            for p in params:
                theirs[p].append(float(internal(p, trial.params[p])))
        rows = list(csv.DictReader(subprocess.run([bench, "propose", name, path, str(seeds)], check=True,
                                                  capture_output=True, text=True).stdout.splitlines()))
        ours = {s: {p: [float(r[p]) for r in rows if r["sampler"] == s] for p in params} for s in ("tpe", "tpe_optuna310")}
        for p in params:
            fmt = lambda v: "[" + ", ".join(f"{x:.4g}" for x in quartiles(v)) + "]"
            d1, p1 = ks(theirs[p], ours["tpe"][p])
            d2, p2 = ks(theirs[p], ours["tpe_optuna310"][p])
            print(f"{name:>16} {p:>5} {fmt(theirs[p]):>28} {fmt(ours['tpe'][p]):>28} {d1:6.3f} {p1:7.3g}"
                  f" {fmt(ours['tpe_optuna310'][p]):>28} {d2:6.3f} {p2:7.3g}")


if __name__ == "__main__":
    main()
