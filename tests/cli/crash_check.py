"""Checks of tests/cli/cli_crash.sh on the folders a killed nexp left (one runs folder per kill point).

  crash_check.py serve                                             reads checks from stdin, one per line
                                                                   (arguments separated by tabs), and
                                                                   answers each with its output, then a
                                                                   line "\x04ok" or "\x04FAIL: ...": one
                                                                   process for all the checks of a test
  crash_check.py points SEED TRACE_RUN TRACE_SWEEP TOTAL N_SWEEP   the seeded kill points, one per line
  crash_check.py killed RUNS_DIR ROWS_JSON SNAPSHOT                after a kill: the index equals the folders,
                                                                   metrics parse; keeps completed runs' status
  crash_check.py resumed RUNS_DIR REFERENCE_RUNS_DIR SNAPSHOT      after resuming: every run completed with the
                                                                   reference's summary and each step once; runs
                                                                   completed before were not touched
"""
import contextlib
import io
import json
import os
import random
import re
import sys

STEPS = 12


class CheckFailed(Exception):
    pass


def fail(message):
    raise CheckFailed(message)


# ---- kill points: (syscall, n-th call of that syscall in the traced process, what it writes)

LINE = re.compile(r"^(?:(\d+) +)?(\w+)\((.*)$")  # strace -f prefixes each call with its process


def category(syscall, args, sweep):
    if sweep:
        if syscall in ("clone", "clone3", "vfork", "fork"):
            return "trial start"
        for name in ("sweep.yaml", "trials.csv", "best.yaml"):
            if name in args:
                return name
        return "index" if "nexp.db" in args else "other"
    for part, name in (("checkpoints", "checkpoint commit"), ("nexp.db", "index update"),
                       ("metrics.jsonl", "metric write"), ("status.json", "status write")):
        if part in args:
            return name
    return "other"


def events(trace, sweep):
    """The calls of the traced process (the first one), numbered per system call as strace counts them."""
    counts, out, main = {}, [], None
    for line in open(trace, errors="replace"):
        m = LINE.match(line)
        if not m or "resumed>" in line:
            continue
        pid, syscall, args = m.groups()
        main = main or pid
        if pid != main:
            continue
        counts[syscall] = counts.get(syscall, 0) + 1
        out.append((syscall, counts[syscall], category(syscall, args, sweep)))
    return out


def choose(evs, n, rng):
    """n events, spread over the categories as evenly as their sizes allow."""
    by = {}
    for e in evs:
        by.setdefault(e[2], []).append(e)
    for v in by.values():
        rng.shuffle(v)
    chosen = []
    while len(chosen) < n and any(by.values()):
        for cat in sorted(by):
            if by[cat] and len(chosen) < n:
                chosen.append(by[cat].pop())
    return chosen


def points(seed, trace_run, trace_sweep, total, n_sweep):
    """`total` points: up to n_sweep of the launcher's (it makes few calls), the rest of the run's."""
    rng = random.Random(int(seed))
    sweep = choose(events(trace_sweep, True), int(n_sweep), rng)
    run = choose(events(trace_run, False), int(total) - len(sweep), rng)
    for mode, chosen in (("run", run), ("sweep", sweep)):
        for syscall, k, cat in chosen:
            print(mode, syscall, k, cat.replace(" ", "_"))


# ---- the folders

def run_folders(runs):
    for root, dirs, files in os.walk(runs):
        dirs[:] = [d for d in dirs if d not in ("checkpoints", "artifacts")]
        if "status.json" in files and "config.yaml" in files:
            yield root


def status(folder):
    with open(os.path.join(folder, "status.json")) as f:
        return json.load(f)


def metric_steps(folder):
    """The steps of metrics.jsonl; a last line without its newline (torn) is left out, as nexp does."""
    path = os.path.join(folder, "metrics.jsonl")
    if not os.path.exists(path):
        return []
    text = open(path, "rb").read().decode()
    lines = text.split("\n")
    complete = lines[:-1]  # the part after the last newline is empty, or torn
    steps = []
    for i, line in enumerate(complete, 1):
        try:
            steps.append(json.loads(line)["step"])
        except (ValueError, KeyError) as e:
            fail(f"{path} line {i} does not parse ({e}): {line!r}")
    return steps


def killed(runs, rows_json, snapshot):
    rows = {r["id"]: r for r in json.load(open(rows_json))}
    expected = {}
    for folder in run_folders(runs):
        s = status(folder)
        want = s["status"]
        if want == "running":  # every process of this runs folder is gone
            want = "interrupted"
        expected[s.get("id", os.path.basename(folder))] = (want, folder)
        steps = metric_steps(folder)
        if steps != list(range(1, len(steps) + 1)):
            fail(f"{folder}: metrics.jsonl steps {steps}")
    if set(rows) != set(expected):
        fail(f"reindex: index rows {sorted(rows)} != run folders {sorted(expected)}")
    for rid, (want, folder) in expected.items():
        if rows[rid]["status"] != want:
            fail(f"reindex: {rid} is {rows[rid]['status']} in the index, {want} in {folder}")
    completed = {f: open(os.path.join(f, "status.json")).read() for f in run_folders(runs) if status(f)["status"] == "completed"}
    json.dump(completed, open(snapshot, "w"))


def resumed(runs, reference, snapshot):
    ref = {os.path.basename(f) if "trial-" in f else "run": status(f)["summary"] for f in run_folders(reference)}
    before = json.load(open(snapshot))
    folders = list(run_folders(runs))
    for folder in folders:
        s = status(folder)
        if s["status"] != "completed":
            fail(f"{folder}: {s['status']} after resuming: {s.get('error', '')}")
        key = os.path.basename(folder) if "trial-" in folder else "run"
        if s["summary"] != ref[key]:
            fail(f"{folder}: summary {s['summary']} != uninterrupted {ref[key]}")
        if metric_steps(folder) != list(range(1, STEPS + 1)):
            fail(f"{folder}: metrics.jsonl steps {metric_steps(folder)}")
        if folder in before and open(os.path.join(folder, "status.json")).read() != before[folder]:
            fail(f"{folder}: completed before the kill, but run again")
    print(len(folders), len(before))


CHECKS = {"points": points, "killed": killed, "resumed": resumed}


def serve():
    """Runs the checks that arrive on stdin; a failed one is answered, and the next one still runs."""
    for request in sys.stdin:
        args = request.rstrip("\n").split("\t")
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                CHECKS[args[0]](*args[1:])
            end = "ok"
        except CheckFailed as e:
            end = f"FAIL: {e}"
        except Exception as e:  # a check that cannot even run (a file missing, JSON that does not parse)
            end = f"FAIL: {args[0]}: {type(e).__name__}: {e}"
        sys.stdout.write(out.getvalue() + "\x04" + end.replace("\n", " ") + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve()
    else:
        try:
            CHECKS[sys.argv[1]](*sys.argv[2:])
        except CheckFailed as e:
            print(f"FAIL: {e}", file=sys.stderr)
            sys.exit(1)
