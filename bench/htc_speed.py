#!/usr/bin/python3
"""nexp's half-trek criterion against SEMID's htcID and graphID.htcID, per n and graph family.

    /usr/bin/python3 bench/htc_speed.py [--nexp build/nexp] [--out runs/bench/htc_speed.csv]

Runs `nexp run configs/htc/semid.yaml` with both algorithms (each decision repeated for >= 0.2 s) on
SEMID's 60 reference graphs, and htc.decide on freshly drawn dense DAGs with n = 160. When R with SEMID
is installed (`Rscript -e 'library(SEMID)'` works) it times SEMID's htcID (tianDecompose = FALSE) and
graphID.htcID on the same graph files in the same run; otherwise it compares against the timings stored
with the reference answers (data/semid-0.4.2/results.csv, n <= 80) and, at n = 160, against the ranges
stated in that folder's README, and says so. Prints a table with the speed ratio per n and writes CSV.
"""
import argparse
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEMID_DIR = os.path.join(REPO, "plugins", "htc", "data", "semid-0.4.2")
# SEMID 0.4.2 on dense DAGs with n = 160 (data/semid-0.4.2/README.md): seconds per graph.
STATED_160 = {"htcID_noTian": (23.0, 42.0), "graphID.htcID": (0.3, 3.0)}

DENSE_160 = """experiment: htc_speed_dense160
method: htc.decide
params: {algorithm: %s, min_seconds: 0.2, nonid: false, json_graphs: 0, export_graphs: true}
dataset: {name: htc.random, family: dag_dense, n: 160, graphs: %d}
device: cpu
seed: 0
threads: 1
"""

R_SCRIPT = r"""
suppressMessages(library(SEMID))
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]; out <- args[2]
files <- sort(list.files(dir, pattern = "_L\\.txt$"))
rows <- c("graph,method,seconds")
for (f in files) {
  name <- sub("_L\\.txt$", "", f)
  L <- as.matrix(read.table(file.path(dir, f)))
  O <- as.matrix(read.table(file.path(dir, paste0(name, "_O.txt"))))
  dimnames(L) <- NULL; dimnames(O) <- NULL
  t1 <- system.time(tryCatch(htcID(MixedGraph(L, O), tianDecompose = FALSE),
                             error = function(e) htcID(L, O, tianDecompose = FALSE)))[["elapsed"]]
  t2 <- system.time(graphID.htcID(L, O))[["elapsed"]]
  rows <- c(rows, sprintf("%s,htcID_noTian,%.4f", name, t1), sprintf("%s,graphID.htcID,%.4f", name, t2))
}
writeLines(rows, out)
"""


def run_nexp(nexp, args, runs_dir):
    cmd = [nexp, "run"] + args + ["runs_dir=" + runs_dir]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), out.stderr[-3000:]))
    match = re.search(r"^run: \S+ (.+)$", out.stdout, re.M)
    return os.path.join(match.group(1).strip(), "artifacts")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def family_of(name):
    """(n, family) from SEMID's names (n080_dag_dense_r1) and htc.random's (dag_dense_n0160_g0001)."""
    m = re.match(r"n(\d+)_(.+)_r\d+$", name) or re.match(r"(.+)_n(\d+)_g\d+$", name)
    return (int(m.group(1)), m.group(2)) if name[0] == "n" and name[1].isdigit() else (int(m.group(2)), m.group(1))


def r_available():
    if not shutil.which("Rscript"):
        return False
    return subprocess.run(["Rscript", "-e", "suppressMessages(library(SEMID))"], capture_output=True).returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_nexp = next((p for p in ("build/nexp",) if os.path.exists(os.path.join(REPO, p))), "nexp")
    parser.add_argument("--nexp", default=default_nexp)
    parser.add_argument("--out", default=os.path.join(REPO, "runs", "bench", "htc_speed.csv"))
    parser.add_argument("--graphs-160", type=int, default=3, help="dense DAGs drawn at n = 160")
    args = parser.parse_args()
    nexp = os.path.join(REPO, args.nexp) if os.sep in args.nexp else args.nexp
    tmp = tempfile.mkdtemp(prefix="htc-bench-")
    runs = os.path.join(tmp, "runs")

    # seconds[(graph)][method] for both sides
    seconds = {}
    for algorithm in ("randomized", "classic"):
        art = run_nexp(nexp, ["configs/htc/semid.yaml", "params.algorithm=" + algorithm, "params.min_seconds=0.2",
                              "params.nonid=false", "params.json_graphs=0"], runs)
        for row in read_csv(os.path.join(art, "results.csv")):
            seconds.setdefault(row["graph"], {})["nexp_" + algorithm] = float(row["seconds"])
        if algorithm == "randomized":
            for row in read_csv(os.path.join(art, "agreement.csv")):
                if row["nodes_agree"] != "TRUE" or row["edges_agree"] != "TRUE":
                    print("warning: %s disagrees with SEMID" % row["graph"])
        config = os.path.join(tmp, "dense160.yaml")
        with open(config, "w") as f:
            f.write(DENSE_160 % (algorithm, args.graphs_160))
        art = run_nexp(nexp, [config], runs)
        for row in read_csv(os.path.join(art, "results.csv")):
            seconds.setdefault(row["graph"], {})["nexp_" + algorithm] = float(row["seconds"])
        exported = os.path.join(art, "graph_files")

    with_r = r_available()
    if with_r:
        source = "SEMID timed now, in this run (Rscript)"
        script = os.path.join(tmp, "semid_times.R")
        with open(script, "w") as f:
            f.write(R_SCRIPT)
        for d in (os.path.join(SEMID_DIR, "graphs"), exported):
            out = os.path.join(tmp, "r_%d.csv" % len(os.listdir(tmp)))
            subprocess.run(["Rscript", script, d, out], check=True)
            for row in read_csv(out):
                seconds.setdefault(row["graph"], {})[row["method"]] = float(row["seconds"])
    else:
        source = ("R with SEMID is not installed (SEMID is not packaged for Debian): SEMID's timings are the ones "
                  "stored with its answers (n <= 80, 2-core machine, R 4.2.2) and, at n = 160, the ranges stated "
                  "in data/semid-0.4.2/README.md")
        for row in read_csv(os.path.join(SEMID_DIR, "results.csv")):
            if row["method"] in ("htcID_noTian", "graphID.htcID"):
                seconds.setdefault(row["graph"], {})[row["method"]] = float(row["seconds"])

    groups = {}
    for graph, t in seconds.items():
        if "nexp_randomized" not in t:
            continue
        groups.setdefault(family_of(graph), []).append(t)
    header = ["n", "family", "graphs", "semid_htcID_s", "semid_graphID_s", "nexp_randomized_s", "nexp_classic_s",
              "htcID_over_randomized", "graphID_over_randomized", "htcID_over_classic"]
    rows = []
    for (n, family) in sorted(groups):
        ts = groups[(n, family)]
        mean = lambda key: statistics.mean(t[key] for t in ts) if all(key in t for t in ts) else None
        h, g, r, c = mean("htcID_noTian"), mean("graphID.htcID"), mean("nexp_randomized"), mean("nexp_classic")
        stated = n == 160 and h is None
        if stated:  # the README's ranges: report the ratio of the range's ends
            h = "%g-%g" % STATED_160["htcID_noTian"]
            g = "%g-%g" % STATED_160["graphID.htcID"]
            ratio = lambda rng, x: "%.0f-%.0f" % (rng[0] / x, rng[1] / x)
            rows.append([n, family, len(ts), h, g, "%.5f" % r, "%.5f" % c, ratio(STATED_160["htcID_noTian"], r),
                         ratio(STATED_160["graphID.htcID"], r), ratio(STATED_160["htcID_noTian"], c)])
        else:
            fmt = lambda x: "" if x is None else "%.5f" % x
            div = lambda a, b: "" if a is None or b is None else "%.0f" % (a / b)
            rows.append([n, family, len(ts), fmt(h), fmt(g), fmt(r), fmt(c), div(h, r), div(g, r), div(h, c)])

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for line in [header] + rows:
        print("  ".join(str(x).rjust(w) for x, w in zip(line, widths)))
    print("\nSEMID side: " + source)
    print("nexp side: %s, CPU seconds of one thread (not inflated by other processes on a shared machine), each "
          "decision repeated for >= 0.2 s" % nexp)
    print("wrote " + args.out)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
