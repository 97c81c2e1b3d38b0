#!/usr/bin/env bash
# Installs the fairness tables into the data cache: DATA_DIR/stable_fairness/{adult/a9a.txt,
# compas/compas-two-years-deidentified.csv}, copied from the project's shared data folder
# ($NEXP_SHARED_DATA, default ../shared/data next to the repository) and checked against the checksums
# below. Called by scripts/setup with the cache folder as its argument; a missing source is reported and
# skipped (the tests that need the table then skip).
set -euo pipefail
DATA=${1:?usage: data.sh DATA_DIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
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
