#!/usr/bin/python3
"""dsminimax's decentralized DS-GDA (sim back end) against the same iteration in PyTorch, and the
comm back end's round latency.

    /usr/bin/python3 bench/dsminimax_speed.py [--nexp build/nexp] [--steps 20000] [--out runs/bench/dsminimax_speed.csv]

1. Steps per second of DS-GDA on the NC-PL family (8 nodes on a ring, x in R^10, y in R^20, exact
   gradients, kappa 10), each step with what nexp computes per step: one gossip round of [X Y S^x S^y],
   the smoothed updates, the local gradients, and ||grad Phi(xbar)|| and the consensus error for the
   stopping rule. nexp: `nexp run configs/dsminimax/ncpl.yaml` with stop_at_eps false (its reported
   seconds, so start-up is left out); PyTorch (Debian's python3-torch, float64, one thread): the same
   iteration written with batched tensors over the nodes, on a freshly drawn instance of the same
   family and sizes (the speed does not depend on the draw). Target: nexp >= 10x.
2. Seconds per gossip round of `params.backend=comm` under `distributed.processes` = 2, 4, 8 (Gloo on
   this machine; each round is one neighbour exchange plus the all-gather of X for the metrics).
"""
import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def nexp_run(nexp, overrides, runs_dir):
    env = dict(os.environ, NEXP_RUNS_DIR=runs_dir, OMP_NUM_THREADS="1")
    out = subprocess.run([nexp, "-q", "run", "configs/dsminimax/ncpl.yaml", *overrides], cwd=REPO, env=env,
                         check=True, capture_output=True, text=True).stdout
    folder = out.strip().splitlines()[-1].split()[-1]
    folder = folder if os.path.isabs(folder) else os.path.join(REPO, folder)
    status = json.load(open(os.path.join(folder, "status.json")))
    return status


def torch_ds_gda_steps_per_second(steps, nodes=8, dx=10, dy=20, rank=15, kappa=10.0, lam=0.5, a=1.0):
    import torch
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    g = torch.Generator().manual_seed(0)
    q, _ = torch.linalg.qr(torch.randn(dy, dy, generator=g))
    s = torch.cat([torch.logspace(0, -math.log10(kappa), rank), torch.zeros(dy - rank)])
    A = q @ torch.diag(s) @ q.T
    C = torch.randn(nodes, rank, dx, generator=g) / math.sqrt(dx)
    B = torch.einsum("ir,r,krj->kij", q[:, :rank], s[:rank].sqrt(), C)  # [M, dy, dx]: aligned coupling
    c = 0.5 * torch.randn(nodes, dx, generator=g)
    Bbar, cbar = B.mean(0), c.mean(0)
    Q = Bbar.T @ torch.linalg.pinv(A) @ Bbar
    W = torch.zeros(nodes, nodes)
    for k in range(nodes):
        for j in (k - 1, k, k + 1):
            W[k, j % nodes] = 1.0 / 3.0
    L = 2.4
    r = 2 * L
    gap = 1 - (1.0 / 3.0 + 2.0 / 3.0 * math.cos(2 * math.pi / nodes))
    eta = gap / (L + r)
    mu = eta * r / 2
    beta = mu / math.sqrt(kappa)

    def grads(X, Y):
        gx = lam * 2 * a * X / (1 + a * X * X) ** 2 - c + torch.einsum("kij,ki->kj", B, Y)
        gy = torch.einsum("kij,kj->ki", B, X) - Y @ A
        return gx, gy

    X = torch.randn(dx, generator=g).repeat(nodes, 1)
    Y = torch.zeros(nodes, dy)
    Z, V = X.clone(), Y.clone()
    Dx, Dy = grads(X, Y)
    Sx, Sy = Dx.clone(), Dy.clone()
    start = time.perf_counter()
    for _ in range(steps):
        xbar = X.mean(0)
        grad_phi = lam * 2 * a * xbar / (1 + a * xbar * xbar) ** 2 - cbar + Q @ xbar
        stop = grad_phi.norm() ** 2 + ((X - xbar) ** 2).sum(1).mean()
        _ = float(stop)  # the stopping rule reads it every step, as nexp does
        P = W @ torch.cat([X, Y, Sx, Sy], 1)
        Xn = P[:, :dx] - eta * (Sx + r * (X - Z))
        Yn = P[:, dx:dx + dy] + eta * (Sy - r * (Y - V))
        Z = Z + beta * (Xn - Z)
        V = V + mu * (Yn - V)
        Gx, Gy = grads(Xn, Yn)
        Sx = P[:, dx + dy:2 * dx + dy] + Gx - Dx
        Sy = P[:, 2 * dx + dy:] + Gy - Dy
        Dx, Dy, X, Y = Gx, Gy, Xn, Yn
    return steps / (time.perf_counter() - start)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nexp", default=os.path.join(REPO, "build", "nexp"))
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--comm-steps", type=int, default=2000)
    ap.add_argument("--out", default=os.path.join(REPO, "runs", "bench", "dsminimax_speed.csv"))
    args = ap.parse_args()
    runs_dir = os.path.join(REPO, "runs", "bench", "dsminimax")
    rows = []

    fixed = [f"params.steps={args.steps}", "params.stop_at_eps=false", "params.log_every=1000000"]
    st = nexp_run(args.nexp, fixed, runs_dir)
    nexp_sps = args.steps / float(st["seconds"])
    torch_sps = torch_ds_gda_steps_per_second(args.steps)
    rows.append({"what": "ds_gda steps/s, 8 nodes (sim)", "nexp": nexp_sps, "anchor": torch_sps,
                 "ratio": nexp_sps / torch_sps})

    for p in (2, 4, 8):
        st = nexp_run(args.nexp, [f"params.steps={args.comm_steps}", "params.stop_at_eps=false", "params.backend=comm",
                                  f"distributed.processes={p}", "params.log_every=1000000"], runs_dir)
        rows.append({"what": f"comm: ms per round, P = {p}", "nexp": 1e3 * float(st["seconds"]) / args.comm_steps,
                     "anchor": float("nan"), "ratio": float("nan")})

    print(f"{'what':34s} {'nexp':>12s} {'PyTorch':>12s} {'ratio':>8s}")
    for r in rows:
        print(f"{r['what']:34s} {r['nexp']:12.1f} {r['anchor']:12.1f} {r['ratio']:8.1f}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["what", "nexp", "anchor", "ratio"])
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
