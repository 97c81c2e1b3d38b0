#!/usr/bin/env bash
# Installs the fairness tables into the data cache: DATA_DIR/stable_fairness/{adult/a9a.txt,
# compas/compas-two-years-deidentified.csv}, copied from the project's shared data folder
# ($NEXP_SHARED_DATA, default ../shared/data next to the repository), and
# DATA_DIR/stable_fairness/<name>/<name>.csv for income, hmda, german and arrests, written once from
# Debian's R packages by data.R (packages.txt lists them). Every file is checked against its checksum
# below (data.R prints numbers with sprintf, so its bytes depend on the data alone, not on R's version).
# Called by scripts/setup with the cache folder as its argument; a missing source (file, Rscript or R
# package) is reported and skipped (the tests that need the table then skip).
set -euo pipefail
DATA=${1:?usage: data.sh DATA_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SRC=${NEXP_SHARED_DATA:-$ROOT/../shared/data}
install_one() {  # name file sha256
  local dest=$DATA/stable_fairness/$1/$2
  if [[ -f $dest ]] && echo "$3  $dest" | sha256sum --quiet -c - 2>/dev/null; then return; fi
  if [[ ! -f $SRC/$1/$2 ]]; then
    echo "setup: stable_fairness: $SRC/$1/$2 not found; set NEXP_SHARED_DATA to the folder holding $1/$2" >&2
    return
  fi
  mkdir -p "$(dirname "$dest")"
  cp "$SRC/$1/$2" "$dest.tmp"
  echo "$3  $dest.tmp" | sha256sum --quiet -c - ||
    { echo "setup: stable_fairness: $SRC/$1/$2 does not match its checksum" >&2; rm -f "$dest.tmp"; exit 1; }
  mv "$dest.tmp" "$dest"
  echo "setup: stable_fairness: $1 -> $dest" >&2
}
install_one adult a9a.txt c809efc89aed824a4ea228038ca4b9fdb9fd46ea2c60160450126987700b2c20
install_one compas compas-two-years-deidentified.csv a5e5c34bfd2d1f065bb12a44c0323421baf74b98b97d585915a0c2e1513ecaba

write_r_table() {  # name sha256
  local dest=$DATA/stable_fairness/$1/$1.csv
  if [[ -f $dest ]] && echo "$2  $dest" | sha256sum --quiet -c - 2>/dev/null; then return; fi
  if ! command -v Rscript >/dev/null; then
    echo "setup: stable_fairness: Rscript not found (Debian r-base-core); $1 skipped" >&2
    return
  fi
  mkdir -p "$(dirname "$dest")"
  local tmp
  tmp=$(mktemp -d)
  TZ=UTC Rscript "$HERE/data.R" "$tmp" "$1" ||
    { echo "setup: stable_fairness: data.R failed on $1" >&2; rm -rf "$tmp"; exit 1; }
  if [[ ! -f $tmp/$1.csv ]]; then rm -rf "$tmp"; return; fi  # its R package is missing (data.R said so)
  echo "$2  $tmp/$1.csv" | sha256sum --quiet -c - ||
    { echo "setup: stable_fairness: $1.csv from data.R does not match its checksum (has the R package's data changed?)" >&2
      rm -rf "$tmp"; exit 1; }
  mv "$tmp/$1.csv" "$dest"
  rm -rf "$tmp"
  echo "setup: stable_fairness: $1 -> $dest" >&2
}
write_r_table income 902d1e8c69eb6a1858d2fb6445a36d7c97c3d8b8d4f649c1fffbc0419158ab7f
write_r_table hmda 28a6a18ff6b9a68459f262c3477cb3f5d69be539d770fb800d3e9e55218bdc07
write_r_table german 9846aa2931adac8ffde6a9f72001ac5e2011cd992815e3409c52442c63ca8211
write_r_table arrests c98b9311779c17743eec4bfd2c639105a2e7c2c041fff4164404495d3d5f3ffa
