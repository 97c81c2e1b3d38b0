#!/usr/bin/env bash
# Real NIR spectra for dirichlet_vae.unmixing, converted once from Debian's R data into CSV:
#   gasoline.csv  60 spectra x 401 channels (900-1700 nm), R package pls (Debian r-cran-pls)
#   tecator.csv  215 spectra x 100 channels (850-1050 nm), R package caret (Debian r-cran-caret)
# Usage: bash data.sh DATA_DIR   (writes DATA_DIR/dirichlet_vae/, checks data.sha256)
# Needs Rscript (r-base-core). caret itself is not installed: only its data file is taken from the
# package archive (apt-get download), as its R dependencies are not needed to read it.
set -euo pipefail
DATA=${1:?usage: bash data.sh DATA_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$DATA/dirichlet_vae
say() { echo "dirichlet_vae data: $*" >&2; }

mkdir -p "$OUT"
if (cd "$OUT" && sha256sum --quiet -c "$HERE/data.sha256" >/dev/null 2>&1); then
  exit 0
fi
if ! command -v Rscript >/dev/null; then
  say "Rscript not found: install r-base-core and r-cran-pls (plugins/dirichlet_vae/packages.txt; scripts/setup does)."
  say "Without them dirichlet_vae.unmixing is unavailable; everything else works."
  exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# One spectrum per line, "%.10g", a header of channel names: byte-identical on every run.
write_csv='write_spectra <- function(x, file) {
  x <- unclass(as.matrix(x))
  header <- if (is.null(colnames(x))) paste0("ch", seq_len(ncol(x))) else gsub(" ", "", colnames(x))
  body <- apply(x, 1, function(r) paste(sprintf("%.10g", r), collapse = ","))
  writeLines(c(paste(header, collapse = ","), body), file)
}'

# gasoline (pls: lazy-load data base)
if [[ ! -f $OUT/gasoline.csv ]]; then
  PLS=$(Rscript -e 'cat(system.file("data", package = "pls"))' 2>/dev/null || true)
  if [[ -n $PLS && -f $PLS/Rdata.rdb ]]; then
    Rscript -e "$write_csv" -e "e <- new.env(); invisible(lazyLoad('$PLS/Rdata', envir = e)); write_spectra(e\$gasoline\$NIR, '$OUT/gasoline.csv')"
    say "gasoline NIR spectra -> $OUT/gasoline.csv"
  else
    say "R package pls not found: install r-cran-pls for the gasoline spectra."
  fi
fi

# tecator (caret: an .RData file)
if [[ ! -f $OUT/tecator.csv ]]; then
  CARET=$(Rscript -e 'cat(system.file("data", package = "caret"))' 2>/dev/null || true)
  FILE=
  if [[ -n $CARET && -f $CARET/tecator.RData ]]; then
    FILE=$CARET/tecator.RData
  elif (cd "$TMP" && apt-get download r-cran-caret >/dev/null 2>&1); then
    dpkg-deb -x "$TMP"/r-cran-caret_*.deb "$TMP/caret"
    FILE=$(find "$TMP/caret" -name tecator.RData | head -n 1)
  fi
  if [[ -n $FILE && -f $FILE ]]; then
    Rscript -e "$write_csv" -e "e <- new.env(); load('$FILE', envir = e); x <- e\$absorp; colnames(x) <- paste0(seq(850, 1048, by = 2), 'nm'); write_spectra(x, '$OUT/tecator.csv')"
    say "tecator NIR spectra -> $OUT/tecator.csv"
  else
    say "tecator.RData not found: install r-cran-caret, or allow 'apt-get download r-cran-caret'."
  fi
fi

# Check what exists; a mismatch means a damaged or differently converted file.
for f in gasoline.csv tecator.csv; do
  [[ -f $OUT/$f ]] || continue
  if ! (cd "$OUT" && grep " $f\$" "$HERE/data.sha256" | sha256sum --quiet -c - >/dev/null 2>&1); then
    say "error: $OUT/$f does not match plugins/dirichlet_vae/data.sha256; delete it and run this script again."
    exit 1
  fi
done
