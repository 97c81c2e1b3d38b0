# Writes socp_reference_ecos.txt: the instances of program (4) stored in socp_reference.txt (made by
# make_socp_reference.py with cvxopt) solved a second time by ECOS (Debian r-cran-ecosolver), a second,
# independent interior-point code. The unit tests compare the plugin's solver with both stored answers;
# they read only the stored files, so CI needs neither R nor ECOS. Run in this folder:
#   Rscript make_socp_reference_ecos.R
# ECOS's standard form: min c'x  s.t.  G x + s = h, s in R_+^l x Q^q1 x ...,  A x = b.
# l2: alpha >= 0 (l rows) and per block the cone (tau, P R alpha) (q rows: s = (tau, -(-P R) alpha)).
# tv: alpha >= 0 and the linear rows (r_g - r_h)' alpha <= tau for every ordered pair g != h.
suppressPackageStartupMessages({
  library(ECOSolveR)
  library(Matrix)
})

lines <- readLines("socp_reference.txt")
lines <- lines[!startsWith(lines, "#")]
nums <- function(s) as.numeric(strsplit(trimws(s), " +")[[1]])
out <- c("# per instance of socp_reference.txt, in its order: a line 'instance K', alpha* (K), objective; ECOS 2.0 (ECOSolveR 0.5.4)")
i <- 1
while (i <= length(lines)) {
  head <- strsplit(lines[i], " ")[[1]]
  K <- as.integer(head[2]); G <- as.integer(head[3]); J <- as.integer(head[4]); kind <- head[5]
  cost <- nums(lines[i + 1])
  rates <- lapply(seq_len(J), function(j) {
    do.call(rbind, lapply(seq_len(G), function(g) nums(lines[i + 1 + (j - 1) * G + g])))
  })
  tau <- nums(lines[i + 2 + J * G])
  i <- i + 5 + J * G  # past tau, cvxopt's alpha and objective
  P <- diag(G) - matrix(1 / G, G, G)
  Gl <- -diag(K); hl <- rep(0, K); Gq <- NULL; hq <- NULL; q <- NULL
  for (r in rates) {
    if (kind == "l2") {
      Gq <- rbind(Gq, rbind(rep(0, K), -(P %*% r))); hq <- c(hq, tau, rep(0, G)); q <- c(q, G + 1L)
    } else {
      for (g in seq_len(G)) for (h in seq_len(G)) if (g != h) {
        Gl <- rbind(Gl, r[g, ] - r[h, ]); hl <- c(hl, tau)
      }
    }
  }
  sol <- ECOS_csolve(c = cost, G = Matrix(rbind(Gl, Gq), sparse = TRUE), h = c(hl, hq),
                     dims = list(l = nrow(Gl), q = if (is.null(q)) NULL else as.integer(q), e = 0L),
                     A = Matrix(matrix(1, 1, K), sparse = TRUE), b = 1,
                     control = ecos.control(maxit = 200L, feastol = 1e-10, abstol = 1e-10, reltol = 1e-10))
  if (sol$retcodes[["exitFlag"]] != 0) stop("ECOS did not reach optimality: ", sol$infostring)
  out <- c(out, paste("instance", K), paste(sprintf("%.17g", sol$x), collapse = " "),
           sprintf("%.17g", sum(cost * sol$x)))
}
writeLines(out, "socp_reference_ecos.txt")
