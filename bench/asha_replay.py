#!/usr/bin/env python3
"""Replays ASHA's rule on the curves of bench/asha_ddr.sh's full-budget sweeps: what ASHA would have kept
and spent with other rungs, without training again. Trials ran one at a time, so a trial's fate depends
only on the values earlier trials logged at each rung; a full-budget trial's curve is the curve its twin
under ASHA would have logged (training is deterministic). The rule is nexp's (core/src/samplers/
pruner.cpp): at rung r = min_step * reduction^k a trial goes on only if its value is among the best
max(1, floor(n / reduction)) of the n values logged there so far, its own included. A pruned trial is
charged its rung plus `overshoot` steps (it sees the stop a step or more late; bench/asha_ddr.sh counts
the real ones from checkpoints). Also prints, per rung, the Spearman correlation between the value there
and the final one, over every full-budget trial of every seed.
  bench/asha_replay.py RUNS_DIR SEEDS TOTAL_STEPS [MIN_STEP:REDUCTION ...]   (default 15:3 45:3 135:3)"""
import glob
import json
import sys


def sweep(folder):
    """Each trial of a sweep in order: its validation curve {step: accuracy} and its final accuracy."""
    out = []
    for t in sorted(glob.glob(f"{folder}/sweep/trial-*")):
        curve = {}
        with open(f"{t}/metrics.jsonl") as f:
            for line in f:
                j = json.loads(line)
                if "val_accuracy" in j:
                    curve[j["step"]] = j["val_accuracy"]
        final = json.load(open(f"{t}/status.json"))["summary"]["val_accuracy"]
        out.append((curve, final))
    return out


def replay(trials, min_step, reduction, total, overshoot=2):
    """ASHA (maximising) over the trials in order: the best final value kept, steps spent, trials completed."""
    rungs, r = [], min_step
    while r < total:
        rungs.append(r)
        r *= reduction
    logged = {r: [] for r in rungs}
    best, spent, completed = float("-inf"), 0, 0
    for curve, final in trials:
        for r in rungs:
            mine = curve[r]
            values = sorted(logged[r] + [mine], reverse=True)
            logged[r].append(mine)
            if mine < values[max(1, len(values) // reduction) - 1]:
                spent += r + overshoot
                break
        else:
            spent += total
            completed += 1
            best = max(best, final)
    return best, spent, completed


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    return cov / (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5


def main():
    runs, seeds, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    settings = [tuple(int(x) for x in s.split(":")) for s in sys.argv[4:]] or [(15, 3), (45, 3), (135, 3)]
    sweeps = [sweep(f"{runs}/ddr-asha-full-{s}") for s in range(seeds)]
    print("min_step reduction  per seed: best reached? (ASHA best / full best, steps ratio)   seeds reached  steps ratio")
    for min_step, reduction in settings:
        cells, reached, spent, full = [], 0, 0, 0
        for trials in sweeps:
            best, steps, _ = replay(trials, min_step, reduction, total)
            top = max(final for _, final in trials)
            ok = best >= top
            reached += ok
            spent, full = spent + steps, full + total * len(trials)
            cells.append(f"{'yes' if ok else 'no'} ({best:.3f}/{top:.3f}, {steps / (total * len(trials)):.2f})")
        print(f"{min_step:8d} {reduction:9d}  {'  '.join(cells)}   {reached}/{seeds}  {spent / full:.3f}")
    every = [t for trials in sweeps for t in trials]
    steps = sorted({s for curve, _ in every for s in curve if s < total})
    print("Spearman correlation of the value at a step with the final value, over", len(every), "trials:")
    print("  " + "  ".join(f"{s}: {spearman([c[s] for c, _ in every], [f for _, f in every]):.2f}" for s in steps))


if __name__ == "__main__":
    main()
