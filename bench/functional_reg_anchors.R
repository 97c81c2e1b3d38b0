#!/usr/bin/env Rscript
# Accuracy anchor for functional_reg on Tecator fat: R's mgcv signal regression (a penalised
# functional linear model, gam(y ~ s(T, by = X)), REML) and PLS (pls::plsr, components by 10-fold CV)
# on exactly the splits nexp wrote, beside nexp's FLM (and every other arm) from the same study.
# Usage:
#   nexp run configs/functional_reg/tecator_study.yaml          # writes artifacts/{splits,study}.csv
#   Rscript bench/functional_reg_anchors.R runs/tecator_study/<id> [DATA_DIR]
# Needs r-cran-mgcv and r-cran-pls. Prints RMSE mean +- sd over the splits and nexp FLM / mgcv.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 1) stop("usage: Rscript bench/functional_reg_anchors.R RUN_FOLDER [DATA_DIR]")
run <- args[1]
data <- if (length(args) >= 2) args[2] else {
  d <- Sys.getenv("NEXP_DATA_DIR")
  if (d == "") d <- file.path(Sys.getenv("HOME"), ".cache", "nexp", "data")
  d
}
suppressPackageStartupMessages({ library(mgcv); library(pls) })
curves <- read.csv(file.path(data, "functional_reg", "tecator_curves.csv"))
resp <- read.csv(file.path(data, "functional_reg", "tecator_responses.csv"))
X <- t(sapply(split(curves$value, curves$id), identity))  # ids in numeric order
wl <- sort(unique(curves$t))
X <- X[as.character(resp$id), , drop = FALSE]
y <- resp$fat
splits <- read.csv(file.path(run, "artifacts", "splits.csv"))
study <- read.csv(file.path(run, "artifacts", "study.csv"))

rmse <- function(a, b) sqrt(mean((a - b)^2))
res <- data.frame()
for (r in sort(unique(splits$repeat.))) {
  s <- splits[splits$repeat. == r, ]
  tr <- match(s$id[s$part == "train"], resp$id)
  te <- match(s$id[s$part == "test"], resp$id)
  Tm <- matrix(wl, nrow(X), length(wl), byrow = TRUE)
  L <- X * (wl[2] - wl[1])  # quadrature weights: the integral of beta(t) x(t) dt
  d <- list(y = y, Tm = Tm, L = L)
  fit <- gam(y ~ s(Tm, by = L, k = 20), data = lapply(d, function(v) if (is.matrix(v)) v[tr, , drop = FALSE] else v[tr]),
             method = "REML")
  p_gam <- predict(fit, newdata = lapply(d, function(v) if (is.matrix(v)) v[te, , drop = FALSE] else v[te]))
  df <- data.frame(y = y[tr]); df$X <- X[tr, ]
  pl <- plsr(y ~ X, ncomp = 20, data = df, validation = "CV", segments = 10)
  k <- which.min(RMSEP(pl, estimate = "CV")$val[1, 1, -1])
  nd <- data.frame(y = y[te]); nd$X <- X[te, ]
  p_pls <- predict(pl, newdata = nd, ncomp = k)[, 1, 1]
  res <- rbind(res, data.frame(rep = r, mgcv = rmse(p_gam, y[te]), pls = rmse(p_pls, y[te])))
}
nexp_flm <- study[study$arm == "flm", ]
res$nexp_flm <- nexp_flm$test_rmse[match(res$rep, nexp_flm$repeat.)]
cat(sprintf("splits: %d\n", nrow(res)))
for (col in c("mgcv", "pls", "nexp_flm"))
  cat(sprintf("%-9s test RMSE %.3f +- %.3f\n", col, mean(res[[col]]), sd(res[[col]])))
for (a in unique(study$arm)) {
  v <- study$test_rmse[study$arm == a]
  cat(sprintf("nexp %-15s %.3f +- %.3f\n", a, mean(v), sd(v)))
}
cat(sprintf("ratio nexp FLM / mgcv: %.3f (paired mean of per-split ratios %.3f)\n",
            mean(res$nexp_flm) / mean(res$mgcv), mean(res$nexp_flm / res$mgcv)))
