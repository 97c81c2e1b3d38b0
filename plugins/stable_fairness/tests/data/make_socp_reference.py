#!/usr/bin/python3
# Writes socp_reference.txt: random instances of program (4) solved by cvxopt's conic solver (Debian
# python3-cvxopt), the reference the unit tests compare the interior-point solver with. The tests read
# only the stored file, so CI needs neither Python nor cvxopt. Run: /usr/bin/python3 make_socp_reference.py
import numpy as np
from cvxopt import matrix, solvers

solvers.options.update(show_progress=False, abstol=1e-10, reltol=1e-10, feastol=1e-10, maxiters=200)
rng = np.random.default_rng(20261201)
out = ["# instance: K G J kind(l2|tv); c (K); J cone or rate blocks of G rows x K; tau; alpha* (K); objective"]
for inst in range(8):
    K = int(rng.integers(3, 13)); G = int(rng.integers(2, 5)); J = 1 if inst % 2 == 0 else 2
    kind = "l2" if inst < 6 else "tv"
    c = rng.uniform(0.1, 0.4, K)
    R = [rng.uniform(0.05, 0.95, (G, K)) for _ in range(J)]
    P = np.eye(G) - np.ones((G, G)) / G
    # tau between the smallest achievable constant (at most that of the uniform mixture) and the cheapest vertex's
    u = np.ones(K) / K
    cheap = np.eye(K)[np.argmin(c)]
    norm = (lambda r, a: np.linalg.norm(P @ r @ a)) if kind == "l2" else (lambda r, a: np.ptp(r @ a))
    lo = max(norm(r, u) for r in R); hi = max(norm(r, cheap) for r in R)
    tau = lo + 0.5 * (hi - lo) if hi > lo else hi
    Gl = [-np.eye(K)]; hl = [np.zeros(K)]; Gq = []; hq = []
    for r in R:
        if kind == "l2":
            M = P @ r
            Gq.append(matrix(np.vstack([np.zeros((1, K)), -M]))); hq.append(matrix(np.concatenate([[tau], np.zeros(G)])))
        else:
            for g in range(G):
                for h in range(G):
                    if g != h:
                        Gl.append((r[g] - r[h]).reshape(1, K)); hl.append(np.array([tau]))
    sol = solvers.socp(matrix(c), Gl=matrix(np.vstack(Gl)), hl=matrix(np.concatenate(hl)),
                       Gq=Gq or None, hq=hq or None, A=matrix(np.ones((1, K))), b=matrix(1.0))
    assert sol["status"] == "optimal", sol["status"]
    a = np.array(sol["x"]).ravel()
    out.append(f"instance {K} {G} {J} {kind}")
    out.append(" ".join(f"{v:.17g}" for v in c))
    for r in R:
        for row in r:
            out.append(" ".join(f"{v:.17g}" for v in row))
    out.append(f"{tau:.17g}")
    out.append(" ".join(f"{v:.17g}" for v in a))
    out.append(f"{c @ a:.17g}")
open(__file__.replace("make_socp_reference.py", "socp_reference.txt"), "w").write("\n".join(out) + "\n")
