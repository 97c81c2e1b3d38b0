#!/usr/bin/env bash
# Real functional data for functional_reg, converted once from Debian's R data into long CSV files:
#   <name>_curves.csv     id,predictor,t,value   (one line per observed point)
#   <name>_responses.csv  id,<responses...>
# tecator   215 NIR absorbance spectra x 100 wavelengths (850-1048 nm); fat, water, protein (r-cran-caret)
# gasoline  60 NIR spectra x 401 wavelengths (900-1700 nm); octane (r-cran-pls)
# growth    Berkeley growth study, 93 children: heights at the 20 (unequally spaced) ages 1..10;
#           response: height at 18 (r-cran-ddalpha)
# Usage: bash data.sh DATA_DIR  (writes DATA_DIR/functional_reg/, checks data.sha256). Needs Rscript;
# caret and ddalpha are not installed: their data files are taken from the package archives.
set -euo pipefail
DATA=${1:?usage: bash data.sh DATA_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$DATA/functional_reg
say() { echo "functional_reg data: $*" >&2; }

mkdir -p "$OUT"
if (cd "$OUT" && sha256sum --quiet -c "$HERE/data.sha256" >/dev/null 2>&1); then
  exit 0
fi
if ! command -v Rscript >/dev/null; then
  say "Rscript not found: install r-base-core and r-cran-pls (plugins/functional_reg/packages.txt; scripts/setup does)."
  say "Without them the real data sets of functional_reg are unavailable; the simulator works."
  exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Long format, "%.10g": byte-identical on every run.
write_long='write_long <- function(x, t, name, file) {
  ids <- rep(seq_len(nrow(x)), times = ncol(x)); ts <- rep(t, each = nrow(x))
  d <- data.frame(id = ids, predictor = name, t = sprintf("%.10g", ts), value = sprintf("%.10g", as.vector(x)))
  d <- d[order(d$id, ts), ]
  write.csv(d, file, row.names = FALSE, quote = FALSE)
}
write_resp <- function(y, file) {
  d <- data.frame(id = seq_len(nrow(y)), lapply(as.data.frame(y), function(v) sprintf("%.10g", v)))
  names(d) <- c("id", colnames(y)); write.csv(d, file, row.names = FALSE, quote = FALSE)
}'

from_archive() {  # package, file name -> path of the data file (installed package first)
  local dir
  dir=$(Rscript -e "cat(system.file('data', package = '$1'))" 2>/dev/null || true)
  if [[ -n $dir && -f $dir/$2 ]]; then echo "$dir/$2"; return; fi
  (cd "$TMP" && apt-get download "r-cran-$1" >/dev/null 2>&1 && dpkg-deb -x "$TMP"/r-cran-"$1"_*.deb "$TMP/$1") || return 0
  find "$TMP/$1" -name "$2" | head -n 1
}

if [[ ! -f $OUT/tecator_responses.csv ]]; then
  FILE=$(from_archive caret tecator.RData)
  if [[ -n $FILE ]]; then
    Rscript -e "$write_long" -e "e <- new.env(); load('$FILE', envir = e)
      write_long(e\$absorp, seq(850, 1048, by = 2), 'absorbance', '$OUT/tecator_curves.csv')
      y <- e\$endpoints; colnames(y) <- c('water', 'fat', 'protein'); write_resp(y[, c('fat', 'water', 'protein')], '$OUT/tecator_responses.csv')"
    say "tecator -> $OUT/tecator_*.csv"
  else
    say "tecator.RData not found: install r-cran-caret, or allow 'apt-get download r-cran-caret'."
  fi
fi

if [[ ! -f $OUT/gasoline_responses.csv ]]; then
  PLS=$(Rscript -e 'cat(system.file("data", package = "pls"))' 2>/dev/null || true)
  if [[ -n $PLS && -f $PLS/Rdata.rdb ]]; then
    Rscript -e "$write_long" -e "e <- new.env(); invisible(lazyLoad('$PLS/Rdata', envir = e)); g <- e\$gasoline
      write_long(unclass(as.matrix(g\$NIR)), seq(900, 1700, by = 2), 'nir', '$OUT/gasoline_curves.csv')
      write_resp(matrix(g\$octane, ncol = 1, dimnames = list(NULL, 'octane')), '$OUT/gasoline_responses.csv')"
    say "gasoline -> $OUT/gasoline_*.csv"
  else
    say "R package pls not found: install r-cran-pls for the gasoline spectra."
  fi
fi

if [[ ! -f $OUT/growth_responses.csv ]]; then
  FILE=$(from_archive ddalpha growth.rda)
  if [[ -n $FILE ]]; then
    Rscript -e "$write_long" -e "e <- new.env(); load('$FILE', envir = e); d <- e\$growth\$dataf
      age <- d[[1]]\$args; keep <- age <= 10
      x <- t(sapply(d, function(c) c\$vals[keep]))
      write_long(x, age[keep], 'height', '$OUT/growth_curves.csv')
      y <- sapply(d, function(c) c\$vals[which.min(abs(c\$args - 18))])
      write_resp(matrix(y, ncol = 1, dimnames = list(NULL, 'height18')), '$OUT/growth_responses.csv')"
    say "growth -> $OUT/growth_*.csv"
  else
    say "growth.rda not found: install r-cran-ddalpha, or allow 'apt-get download r-cran-ddalpha'."
  fi
fi

for f in tecator_curves.csv tecator_responses.csv gasoline_curves.csv gasoline_responses.csv growth_curves.csv growth_responses.csv; do
  [[ -f $OUT/$f ]] || continue
  if ! (cd "$OUT" && grep " $f\$" "$HERE/data.sha256" | sha256sum --quiet -c - >/dev/null 2>&1); then
    say "error: $OUT/$f does not match plugins/functional_reg/data.sha256; delete it and run this script again."
    exit 1
  fi
done
