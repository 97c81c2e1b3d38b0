#!/usr/bin/python3
"""nexp's fds baseline samplers against the same samplers written in PyTorch, on the same noise and denoiser.

    /usr/bin/python3 bench/fds_reference.py [--nexp build/nexp] [--samples 20000] [--nfe 10]

For each of euler, heun and dpmpp_2m it runs `nexp run configs/fds/sample.yaml` with the exact
denoiser and params.write_samples=true (the mixture's components, the starting noise z and the samples
go to the run's artifacts/), then samples again in PyTorch (float64, one thread) from the same z with
the same closed-form mixture denoiser: EDM's rho = 7 schedule, EDM Algorithm 1 (Euler, Heun) and
DPM-Solver++(2M) in sigma form (k-diffusion's sample_dpmpp_2m). Prints, per sampler, the largest absolute
deviation between the two sets of samples and the time per denoiser call of each, with their ratio.
"""
import argparse
import csv
import math
import os
import re
import subprocess
import sys
import time

import torch

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)


def read_matrix(path):
    with open(path) as f:
        rows = list(csv.reader(f))[1:]
    return torch.tensor([[float(v) for v in r] for r in rows])


class Mixture:
    """D(x; sigma) = sum_k r_k(x) [mu_k + S_k (S_k + sigma^2 I)^-1 (x - mu_k)], in each component's eigenbasis."""

    def __init__(self, rows, d):
        self.w = rows[:, 0]
        self.mu = rows[:, 1:1 + d]
        self.lam = rows[:, 1 + d:1 + 2 * d]
        self.u = rows[:, 1 + 2 * d:].reshape(-1, d, d).transpose(1, 2)  # columns are eigenvectors

    def __call__(self, x, sigma):
        v = self.lam + sigma * sigma                                    # [K, d]
        y = torch.einsum("kji,nkj->nki", self.u, x[:, None, :] - self.mu[None])  # U^T (x - mu)
        logp = torch.log(self.w) - 0.5 * torch.log(v).sum(1) - 0.5 * (y * y / v).sum(2)
        r = torch.softmax(logp, dim=1)                                  # [n, K]
        post = self.mu[None] + torch.einsum("kij,nkj->nki", self.u, y * (self.lam / v))
        return (r[:, :, None] * post).sum(1)


def schedule(n, smin=0.002, smax=80.0, rho=7.0):
    a, b = smax ** (1 / rho), smin ** (1 / rho)
    t = [(a + (i / (n - 1) if n > 1 else 0.0) * (b - a)) ** rho for i in range(n)]
    return t + [0.0]


def sample(kind, den, z, nfe):
    n = max(1, (nfe + 1) // 2) if kind == "heun" else max(1, nfe)
    t = schedule(n)
    x = t[0] * z
    calls, prev, h_last = 0, None, 0.0
    for i in range(n):
        ti, tn = t[i], t[i + 1]
        d = den(x, ti)
        calls += 1
        if kind == "dpmpp_2m":
            if tn == 0:
                x = d
            else:
                h = math.log(ti) - math.log(tn)
                target = d if prev is None else (1 + 1 / (2 * h_last / h)) * d - (1 / (2 * h_last / h)) * prev
                x = (tn / ti) * x - math.expm1(-h) * target
                h_last = h
            prev = d
            continue
        slope = (x - d) / ti
        nxt = x + (tn - ti) * slope
        if kind == "heun" and tn > 0:
            d2 = den(nxt, tn)
            calls += 1
            nxt = x + (tn - ti) * (0.5 * slope + 0.5 * (nxt - d2) / tn)
        x = nxt
    return x, calls


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nexp", default=os.path.join(root, "build", "nexp"))
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--nfe", type=int, default=10)
    ap.add_argument("--kind", default="ring8")
    args = ap.parse_args()
    if not os.access(args.nexp, os.X_OK):
        sys.exit(f"fds_reference: no nexp executable at {args.nexp}; build it or pass --nexp")
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE")
    print(f"{'sampler':10} {'max |dev|':>10} {'nexp s/NFE':>11} {'torch s/NFE':>12} {'torch/nexp':>10}")
    for kind in ["euler", "heun", "dpmpp_2m"]:
        out = subprocess.run([args.nexp, "run", os.path.join(root, "configs/fds/sample.yaml"), f"params.sampler={kind}",
                              "params.denoiser=exact", f"params.nfe={args.nfe}", f"params.samples={args.samples}",
                              f"dataset.kind={args.kind}", "params.write_samples=true", "threads=1"],
                             cwd=root, env=env, capture_output=True, text=True, check=True).stdout
        run_dir = os.path.join(root, re.search(r"^run: \S+ (\S+)$", out, re.M).group(1))
        nexp_s = float(re.search(r"^seconds_per_nfe\s+(\S+)", out, re.M).group(1))
        art = os.path.join(run_dir, "artifacts")
        z, ref = read_matrix(os.path.join(art, "z.csv")), read_matrix(os.path.join(art, "samples.csv"))
        den = Mixture(read_matrix(os.path.join(art, "mixture.csv")), z.shape[1])
        t0 = time.perf_counter()
        x, calls = sample(kind, den, z, args.nfe)
        torch_s = (time.perf_counter() - t0) / calls
        dev = (x - ref).abs().max().item()
        print(f"{kind:10} {dev:10.2e} {nexp_s:11.4f} {torch_s:12.4f} {torch_s / nexp_s:10.2f}")


if __name__ == "__main__":
    main()
