"""The factorised Hellinger triplet term against the materialised C x R x C tensor, in nexp and in PyTorch.

nexp: `nexp run configs/hellinger_sg/bench.yaml` (hellinger_sg.bench: forward + backward of the mean
triplet term on random logits, one timing per size (REPEATS), one thread; artifacts/bench.csv). PyTorch (Debian
python3-torch, the same LibTorch underneath): the same two implementations, the same sizes, the same
chunking of the materialised one, each size timed in a fresh child process whose peak resident memory
growth is measured too. Prints one table (seconds of both implementations in both, the factorised
speed-up, the PyTorch / nexp ratio, memory) and writes CSV.

    /usr/bin/python3 bench/hellinger_sg_loss.py [path/to/nexp]     (default: build/nexp)
    /usr/bin/python3 bench/hellinger_sg_loss.py --torch-only 100,250,500

--torch-only EDGES times the PyTorch side alone at the given sizes (the nexp side's numbers come from
`nexp run configs/hellinger_sg/bench.yaml 'params.edges=[...]'`) and prints and writes its rows.
"""
import csv
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
C, R, CHUNK, REPEATS = 160, 27, 32, 1
EDGES = [100, 250, 500, 1000, 2000]


def roots(node_logits, pred_logits):
    import torch
    return torch.exp(0.5 * torch.log_softmax(node_logits, 1)), torch.exp(0.5 * torch.log_softmax(pred_logits, 1))


def factorised(p, q, edges):
    (pn, pr), (qn, qr) = p, q
    bc = (pn * qn).sum(1)
    return 1 - bc[edges[:, 0]] * (pr * qr).sum(1) * bc[edges[:, 1]]


def materialised(p, q, edges):
    import torch
    (pn, pr), (qn, qr) = p, q
    out = []
    for a in range(0, edges.shape[0], CHUNK):
        s, o = edges[a:a + CHUNK, 0], edges[a:a + CHUNK, 1]
        cube_p = pn[s][:, :, None, None] * pr[a:a + CHUNK][:, None, :, None] * pn[o][:, None, None, :]
        cube_q = qn[s][:, :, None, None] * qr[a:a + CHUNK][:, None, :, None] * qn[o][:, None, None, :]
        out.append(1 - (cube_p * cube_q).sum((1, 2, 3)))
    return torch.cat(out)


def child(impl, n_edges):
    """One size in a fresh process: median seconds of forward + backward, and peak RSS growth (bytes)."""
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(n_edges)
    n = max(2, n_edges // 4)
    edges = torch.randint(0, n, (n_edges, 2))
    q = roots(torch.randn(n, C), torch.randn(n_edges, R))
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    fn = factorised if impl == "factorised" else materialised
    seconds = []
    for _ in range(REPEATS):
        node = torch.randn(n, C, requires_grad=True)
        pred = torch.randn(n_edges, R, requires_grad=True)
        start = time.perf_counter()
        fn(roots(node, pred), q, edges).mean().backward()
        seconds.append(time.perf_counter() - start)
    peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024
    print(json.dumps({"seconds": statistics.median(seconds), "peak_bytes": peak}))


def pytorch_side():
    rows = {}
    for n_edges in EDGES:
        for impl in ("factorised", "materialised"):
            out = subprocess.run([sys.executable, __file__, "--child", impl, str(n_edges)], check=True,
                                 capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
            rows[(impl, n_edges)] = json.loads(out.stdout)
    return rows


def nexp_side(nexp):
    with tempfile.TemporaryDirectory() as runs:
        subprocess.run([nexp, "run", "configs/hellinger_sg/bench.yaml", f"runs_dir={runs}",
                        f"params.edges=[{','.join(map(str, EDGES))}]", f"params.chunk={CHUNK}",
                        f"params.repeats={REPEATS}"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                       env={**os.environ, "OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "PASSIVE"})
        table = next(pathlib.Path(runs).glob("hellinger_sg-bench/*/artifacts/bench.csv"))
        with open(table) as f:
            return {int(r["edges"]): r for r in csv.DictReader(f)}


def torch_only(sizes):
    rows = []
    for n_edges in sizes:
        row = [n_edges]
        for impl in ("factorised", "materialised"):
            out = subprocess.run([sys.executable, __file__, "--child", impl, str(n_edges)], check=True,
                                 capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
            r = json.loads(out.stdout)
            row += [r["seconds"], r["peak_bytes"]]
        row.append(row[3] / row[1])
        rows.append(row)
        print(f"E = {n_edges}: torch factorised {row[1]:.2e} s ({row[2] / 1e6:.1f} MB), materialised {row[3]:.2e} s "
              f"({row[4] / 1e6:.1f} MB): {row[5]:.0f}x", flush=True)
    out_dir = pathlib.Path(os.environ.get("BENCH_OUT", ROOT / "runs/bench"))
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / "hellinger_sg_loss_torch.csv", "w", newline="") as f:
        csv.writer(f).writerows([["edges", "torch_factorised_s", "torch_factorised_peak_bytes", "torch_materialised_s",
                                  "torch_materialised_peak_bytes", "torch_speedup"]] + rows)
    print(f"CSV: {out_dir / 'hellinger_sg_loss_torch.csv'}")


def main():
    nexp = str(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build/nexp").resolve())
    if not os.access(nexp, os.X_OK):
        sys.exit(f"hellinger_sg_loss: no nexp executable at {nexp} (build it, or pass its path)")
    ours, theirs = nexp_side(nexp), pytorch_side()
    out_dir = pathlib.Path(os.environ.get("BENCH_OUT", ROOT / "runs/bench"))
    out_dir.mkdir(parents=True, exist_ok=True)
    header = ["edges", "nexp_factorised_s", "nexp_materialised_s", "nexp_speedup", "torch_factorised_s",
              "torch_materialised_s", "torch_speedup", "torch_over_nexp_factorised", "nexp_factorised_bytes",
              "nexp_materialised_block_bytes", "torch_factorised_peak_bytes", "torch_materialised_peak_bytes"]
    rows = []
    for e in EDGES:
        n, tf, tm = ours[e], theirs[("factorised", e)], theirs[("materialised", e)]
        nf, nm = float(n["factorised_s"]), float(n["materialised_s"])
        rows.append([e, nf, nm, nm / nf, tf["seconds"], tm["seconds"], tm["seconds"] / tf["seconds"],
                     tf["seconds"] / nf, int(n["factorised_bytes"]), int(n["materialised_bytes"]),
                     tf["peak_bytes"], tm["peak_bytes"]])
    with open(out_dir / "hellinger_sg_loss.csv", "w", newline="") as f:
        csv.writer(f).writerows([header] + rows)
    print(f"C = {C}, R = {R}, forward + backward, one thread, median of {REPEATS}; materialised in blocks of {CHUNK} edges")
    print(f"{'edges':>6} {'nexp fact s':>12} {'nexp mat s':>11} {'speed-up':>9} {'torch fact s':>13} "
          f"{'torch mat s':>12} {'speed-up':>9} {'torch/nexp':>10} {'torch fact MB':>13} {'torch mat MB':>12}")
    for r in rows:
        print(f"{r[0]:>6} {r[1]:>12.2e} {r[2]:>11.2e} {r[3]:>8.0f}x {r[4]:>13.2e} {r[5]:>12.2e} {r[6]:>8.0f}x "
              f"{r[7]:>10.2f} {r[10] / 1e6:>13.1f} {r[11] / 1e6:>12.1f}")
    print(f"CSV: {out_dir / 'hellinger_sg_loss.csv'}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--torch-only":
        torch_only([int(e) for e in sys.argv[2].split(",")])
    else:
        main()
