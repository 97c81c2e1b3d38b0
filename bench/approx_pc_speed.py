"""PC and Approx PC training steps in plain PyTorch beside nexp's approx_pc.train, to time them.

The same 784-256-256-10 tanh MLP, batch 64, squared error, the same inference: PC's T gradient steps on
the energy from the feedforward state (clamped output, nudged target); Approx PC's K subgoals, each
re-linearising Q = J^T and taking chord-Newton steps of the central controller until its residual is
below the tolerance. Runs nexp (one thread) and the PyTorch version (Debian python3-torch, one thread)
alternately ROUNDS times on MNIST; prints ms per step and the ratio nexp / PyTorch of the medians.

    /usr/bin/python3 bench/approx_pc_speed.py [--nexp build/nexp] [--steps 100] [--rounds 2]
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent


def read_idx(path):
    data = path.read_bytes()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(dims)]
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).reshape(shape)


class Mlp:
    def __init__(self, sizes, gen):
        self.W = [None] + [torch.randn(sizes[l], sizes[l - 1], generator=gen) / sizes[l - 1] ** 0.5
                           for l in range(1, len(sizes))]
        self.b = [None] + [torch.zeros(sizes[l]) for l in range(1, len(sizes))]
        self.L = len(sizes) - 1

    def phi(self, x, l):
        return x if l == 0 else torch.tanh(x)

    def dphi(self, x, l):
        return torch.ones_like(x) if l == 0 else 1 - torch.tanh(x) ** 2

    def predict(self, l, x_prev):
        return torch.addmm(self.b[l], self.phi(x_prev, l - 1), self.W[l].t())

    def forward(self, x):
        xs = [x]
        for l in range(1, self.L + 1):
            xs.append(self.predict(l, xs[-1]))
        return xs

    def apply_local(self, x, e, lr):
        for l in range(1, self.L + 1):
            self.W[l].add_(e[l].t() @ self.phi(x[l - 1], l - 1), alpha=lr)
            self.b[l].add_(e[l].sum(0), alpha=lr)


def pc_step(net, x0, y, nudge, steps, gamma, lr):
    ff = net.forward(x0)
    L = net.L
    x = [t.clone() for t in ff]
    x[L] = ff[L] + nudge * (y - ff[L])
    for t in range(steps + 1):
        eps = [None, x[1] - ff[1]] + [x[l] - net.predict(l, x[l - 1]) for l in range(2, L + 1)]
        if t == steps:
            break
        for l in range(1, L):
            x[l] = x[l] - gamma * (eps[l] - net.dphi(x[l], l) * (eps[l + 1] @ net.W[l + 1]))
    net.apply_local(x, eps, lr / nudge)


def jacobians(net, v):
    L, B, C = net.L, v[net.L].shape[0], v[net.L].shape[1]
    J = [None] * (L + 1)
    J[L] = torch.eye(C).expand(B, C, C)
    J[L - 1] = net.W[L].unsqueeze(0) * net.dphi(v[L - 1], L - 1).unsqueeze(1)
    for l in range(L - 2, 0, -1):
        J[l] = torch.matmul(J[l + 1], net.W[l + 1]) * net.dphi(v[l], l).unsqueeze(1)
    return J


def approx_pc_step(net, x0, y, nudge, subgoals, max_iters, tol, lr):
    ff = net.forward(x0)
    L = net.L
    delta = nudge * (y - ff[L])
    scale = delta.norm()
    u = torch.zeros_like(ff[L])
    v, d = list(ff), [None] * (L + 1)
    for k in range(1, subgoals + 1):
        J = jacobians(net, v)
        A = torch.eye(u.shape[1]).expand_as(J[L]).clone()
        for l in range(1, L):
            A = A + torch.bmm(J[l], J[l].transpose(1, 2))
        goal = ff[L] + (k / subgoals) * delta
        for i in range(max_iters + 1):
            for l in range(1, L + 1):
                d[l] = u if l == L else torch.bmm(u.unsqueeze(1), J[l]).squeeze(1)
                v[l] = (ff[1] if l == 1 else net.predict(l, v[l - 1])) + d[l]
            r = goal - v[L]
            if r.norm() <= tol * scale or i == max_iters:
                break
            u = u + torch.linalg.solve(A, r.unsqueeze(-1)).squeeze(-1)
    net.apply_local(v, d, lr / nudge)


def torch_ms_per_step(rule, x, labels, args):
    gen = torch.Generator().manual_seed(0)
    net = Mlp([784, 256, 256, 10], gen)
    B = args.batch
    y_all = torch.nn.functional.one_hot(labels, 10).float()
    start = time.perf_counter()
    for s in range(args.steps):
        xb, yb = x[s * B:(s + 1) * B], y_all[s * B:(s + 1) * B]
        if rule == "pc":
            pc_step(net, xb, yb, args.nudge, args.pc_steps, 0.1, args.lr / B)
        else:
            approx_pc_step(net, xb, yb, args.nudge, args.subgoals, args.max_iters, args.control_tol, args.lr / B)
    return 1000 * (time.perf_counter() - start) / args.steps


def nexp_ms_per_step(rule, args, runs):
    cmd = [args.nexp, "run", "configs/approx_pc/train.yaml", f"params.rule={rule}", "experiment=approx_pc-bench",
           f"runs_dir={runs}", "threads=1", f"params.max_steps={args.steps}", f"params.eval_every={args.steps}",
           f"params.cos_every={10 * args.steps}", f"params.lr={args.lr}", f"params.nudge={args.nudge}",
           f"params.pc_steps={args.pc_steps}", f"params.subgoals={args.subgoals}", f"params.max_iters={args.max_iters}",
           f"params.control_tol={args.control_tol}", "dataset.test_size=100"]
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    status = sorted(pathlib.Path(runs, "approx_pc-bench").glob("*/status.json"), key=lambda p: p.stat().st_mtime)[-1]
    return json.loads(status.read_text())["summary"]["ms_per_step"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nexp", default=str(ROOT / "build" / "nexp"))
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--nudge", type=float, default=0.1)
    p.add_argument("--pc-steps", type=int, default=20)
    p.add_argument("--subgoals", type=int, default=4)
    p.add_argument("--max-iters", type=int, default=10)
    p.add_argument("--control-tol", type=float, default=1e-4)
    p.add_argument("--lr", type=float, default=0.01)
    args = p.parse_args()
    data = pathlib.Path(os.environ.get("NEXP_DATA_DIR", pathlib.Path.home() / ".cache/nexp/data")) / "mnist"
    if not (data / "train-images-idx3-ubyte").exists():
        sys.exit(f"approx_pc_speed: MNIST is not in {data}; run scripts/setup")
    if not pathlib.Path(args.nexp).exists():
        sys.exit(f"approx_pc_speed: no nexp executable at {args.nexp}; build it or pass --nexp")
    torch.set_num_threads(1)
    os.environ.update(OMP_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE")
    n = args.steps * args.batch
    x = read_idx(data / "train-images-idx3-ubyte")[:n].reshape(n, -1).float() / 255
    labels = read_idx(data / "train-labels-idx1-ubyte")[:n].long()
    times = {(rule, impl): [] for rule in ("pc", "approx_pc") for impl in ("nexp", "pytorch")}
    with tempfile.TemporaryDirectory() as runs:
        for _ in range(args.rounds):
            for rule in ("pc", "approx_pc"):
                times[(rule, "nexp")].append(nexp_ms_per_step(rule, args, runs))
                times[(rule, "pytorch")].append(torch_ms_per_step(rule, x, labels, args))
    print(f"{'rule':<10} {'nexp ms/step':>13} {'PyTorch ms/step':>16} {'nexp / PyTorch':>15}")
    for rule in ("pc", "approx_pc"):
        a, b = statistics.median(times[(rule, "nexp")]), statistics.median(times[(rule, "pytorch")])
        print(f"{rule:<10} {a:>13.2f} {b:>16.2f} {a / b:>15.2f}")
    a = statistics.median(times[("approx_pc", "pytorch")]) / statistics.median(times[("pc", "pytorch")])
    print(f"PyTorch: Approx PC / PC time per step = {a:.2f}")


if __name__ == "__main__":
    main()
