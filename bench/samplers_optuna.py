#!/usr/bin/env python3
"""Optuna's samplers on the objectives of bench/samplers_objectives.hpp (the same formulas), one CSV row
per trial in the format of nexp_sampler_bench: impl, sampler, objective, seed, trial, value, best so
far, seconds the sampler took to propose it (ask plus the suggest calls, where Optuna's independent
sampling happens). Defaults throughout: TPESampler(seed=s), RandomSampler(seed=s) and, when OPTUNA_SAMPLERS
names them, CmaEsSampler(seed=s) (needs python3-cmaes) and tpe_scaled: TPESampler(seed=s) with the
kernel density Optuna 3.1.0 computes corrected (each kernel's -log sigma put back, as nexp does).

    samplers_optuna.py SEEDS BUDGET [OBJECTIVE ...] > optuna.csv

The two-objective problems of pareto_problems() (bench/samplers_pareto.sh): NSGAIISampler(seed=s) and
RandomSampler(seed=s) with their defaults (OPTUNA_SAMPLERS picks them, default nsga2,random), one row per
trial in the format of `nexp_sampler_bench pareto`: impl, sampler, problem, seed, trial, f1, f2,
hypervolume of the trials so far, seconds the sampler took.

    samplers_optuna.py pareto SEEDS BUDGET [PROBLEM ...] > optuna_pareto.csv
"""
import math
import os
import sys
import time

import numpy as np
import optuna
from optuna.samplers._tpe import _truncnorm as truncnorm

from samplers_report import REFERENCE_POINTS, hypervolume_2d

M64 = (1 << 64) - 1


def mix64(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def shared_noise(seed, trial):
    base = (seed * 1000003 + trial * 2) & M64
    u1 = (mix64(base) >> 11) * 2.0**-53
    u2 = (mix64((base + 1) & M64) >> 11) * 2.0**-53
    return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2 * math.pi * u2)


def branin(t, seed, n):
    x1, x2 = t.suggest_float("x1", -5, 10), t.suggest_float("x2", 0, 15)
    b, c, s, tt = 5.1 / (4 * math.pi**2), 5 / math.pi, 10, 1 / (8 * math.pi)
    return (x2 - b * x1 * x1 + c * x1 - 6) ** 2 + s * (1 - tt) * math.cos(x1) + s


ALPHA = [1.0, 1.2, 3.0, 3.2]
A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
P = [[0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886], [0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991],
     [0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650], [0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381]]


def hartmann6_value(x):
    return -sum(ALPHA[i] * math.exp(-sum(A[i][j] * (x[j] - P[i][j]) ** 2 for j in range(6))) for i in range(4))


def hartmann6(t, seed, n):
    return hartmann6_value([t.suggest_float(f"x{i}", 0, 1) for i in range(6)])


def noisy_hartmann6(t, seed, n):
    return hartmann6(t, seed, n) + 0.1 * shared_noise(seed, n)


def rosenbrock10(t, seed, n):
    x = [t.suggest_float(f"x{i}", -5, 10) for i in range(10)]
    return sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(9))


def mixed(t, seed, n):
    c = ["a", "b", "c"].index(t.suggest_categorical("c", ["a", "b", "c"]))
    k = t.suggest_int("k", 1, 10)
    x, y = t.suggest_float("x", -3, 3), t.suggest_float("y", -3, 3)
    cx, cy, off = [1, -1, 0], [0.5, 2, -1], [0.5, 0, 1]
    return (x - cx[c]) ** 2 + (y - cy[c]) ** 2 + off[c] + 0.1 * (k - 7) ** 2


OBJECTIVES = {"branin": branin, "hartmann6": hartmann6, "rosenbrock10": rosenbrock10,
              "noisy_hartmann6": noisy_hartmann6, "mixed": mixed}


# The two-objective problems (bench/samplers_objectives.hpp has the formulas, fronts and reference points).
def zdt_g(x):
    return 1 + 9 * sum(x[1:]) / (len(x) - 1)


def zdt1(t):
    x = [t.suggest_float(f"x{i}", 0, 1) for i in range(5)]
    g = zdt_g(x)
    return x[0], g * (1 - math.sqrt(x[0] / g))


def zdt2(t):
    x = [t.suggest_float(f"x{i}", 0, 1) for i in range(5)]
    g = zdt_g(x)
    return x[0], g * (1 - (x[0] / g) * (x[0] / g))


def fonseca_fleming(t):
    x = [t.suggest_float(f"x{i}", -4, 4) for i in range(3)]
    c = 1 / math.sqrt(len(x))
    return (1 - math.exp(-sum((v - c) ** 2 for v in x)), 1 - math.exp(-sum((v + c) ** 2 for v in x)))


PARETO_PROBLEMS = {"zdt1": zdt1, "zdt2": zdt2, "fonseca_fleming": fonseca_fleming}


def scaled_logpdf(x, a, b, loc=0, scale=1):
    """The truncated normal's log density with the -log(scale) that Optuna 3.1.0's _truncnorm.logpdf
    leaves out (optuna issue #5109, fixed by pull request #5110 in later releases)."""
    return UNSCALED_LOGPDF(x, a, b, loc=loc, scale=scale) - np.log(scale)


UNSCALED_LOGPDF = truncnorm.logpdf


def use_density(scaled):
    truncnorm.logpdf = scaled_logpdf if scaled else UNSCALED_LOGPDF


# Optuna's defaults throughout; OPTUNA_SAMPLERS (comma-separated) picks them. tpe_scaled: TPESampler with
# each kernel's density normalised (what nexp's TPE computes by default).
SAMPLERS = {"tpe": lambda seed: optuna.samplers.TPESampler(seed=seed),
            "tpe_scaled": lambda seed: optuna.samplers.TPESampler(seed=seed),
            "random": lambda seed: optuna.samplers.RandomSampler(seed=seed),
            "cmaes": lambda seed: optuna.samplers.CmaEsSampler(seed=seed)}


class Timed:
    """A trial whose suggest calls are timed (Optuna's independent sampling runs inside them)."""

    def __init__(self, trial):
        self.trial, self.seconds = trial, 0.0

    def __getattr__(self, name):
        method = getattr(self.trial, name)

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t0
        return timed


PARETO_SAMPLERS = {"nsga2": lambda seed: optuna.samplers.NSGAIISampler(seed=seed),
                   "random": lambda seed: optuna.samplers.RandomSampler(seed=seed)}


def pareto(seeds, budget, only):
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    out = sys.stdout
    out.write("impl,sampler,problem,seed,trial,f1,f2,hypervolume,ask_seconds\n")
    for name in only or list(PARETO_PROBLEMS):
        f, reference = PARETO_PROBLEMS[name], REFERENCE_POINTS[name]
        for sampler_name in os.environ.get("OPTUNA_SAMPLERS", "nsga2,random").split(","):
            for seed in range(seeds):
                study = optuna.create_study(directions=["minimize", "minimize"], sampler=PARETO_SAMPLERS[sampler_name](seed))
                values = []
                for n in range(budget):
                    t0 = time.perf_counter()
                    trial = study.ask()
                    ask = time.perf_counter() - t0
                    timed = Timed(trial)
                    v = f(timed)
                    study.tell(trial, v)
                    values.append(v)
                    out.write(f"optuna,{sampler_name},{name},{seed},{n},{v[0]:.10g},{v[1]:.10g},"
                              f"{hypervolume_2d(values, reference):.10g},{ask + timed.seconds:.3e}\n")


def main():
    if sys.argv[1] == "pareto":
        return pareto(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:])
    seeds, budget = int(sys.argv[1]), int(sys.argv[2])
    only = sys.argv[3:] or list(OBJECTIVES)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    out = sys.stdout
    out.write("impl,sampler,objective,seed,trial,value,best,ask_seconds\n")
    for name in only:
        f = OBJECTIVES[name]
        for sampler_name in os.environ.get("OPTUNA_SAMPLERS", "tpe,random").split(","):
            use_density(sampler_name == "tpe_scaled")
            for seed in range(seeds):
                sampler = SAMPLERS[sampler_name](seed)
                study = optuna.create_study(sampler=sampler)
                best = math.inf
                for n in range(budget):
                    t0 = time.perf_counter()
                    trial = study.ask()
                    ask = time.perf_counter() - t0
                    timed = Timed(trial)
                    v = f(timed, seed, n)
                    study.tell(trial, v)
                    best = min(best, v)
                    out.write(f"optuna,{sampler_name},{name},{seed},{n},{v:.10g},{best:.10g},{ask + timed.seconds:.3e}\n")


if __name__ == "__main__":
    main()
