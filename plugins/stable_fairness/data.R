# The four R-packaged fairness tables of stable_fairness, written once as CSV files (run by data.sh):
#   Rscript data.R OUT_DIR [NAME ...]      writes OUT_DIR/<name>.csv for NAME in income hmda german arrests
# Columns: `label` (0/1), one text column `group_<attribute>` per protected attribute (an empty value:
# unknown), then numeric features: numbers as they are, factors one-hot against their first level (a
# missing value gets its own indicator). Protected attributes are never features; the classifiers see the
# chosen group through its indicator (stable_fairness.table, group_feature). Numbers are printed with
# sprintf("%.10g"), so the bytes do not depend on R's print settings. A table whose package is missing is
# reported and skipped.
#
# income   kernlab::income (8,993; 1987 San Francisco Bay Area marketing survey). label: annual household
#          income of $30,000 or more, the classes above the median class ([25,000, 30,000)).
#          group_sex female/male; group_ethnic white/hispanic/black/other (Asian, American Indian,
#          East Indian, Pacific Islander, Other pooled; 68 rows with no answer left empty).
# hmda     AER::HMDA (2,380; Boston HMDA mortgage denials, Stock and Watson). label: deny.
#          group_afam african_american/other.
# german   caret::GermanCredit (1,000; Statlog German credit). label: Class == "Good".
#          group_sex female/male (from the Personal.* status-and-sex columns; one feature `single` keeps
#          the marital status), group_age under25/25plus (Age is then not a feature either).
# arrests  carData::Arrests (5,226; Toronto Star, marijuana possession arrests 1997-2002). label: released
#          with a summons. group_colour black/white; group_colour_sex black_female ... white_male.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 1) stop("usage: Rscript data.R OUT_DIR [income hmda german arrests]")
out_dir <- args[1]
wanted <- if (length(args) > 1) args[-1] else c("income", "hmda", "german", "arrests")

clean <- function(x) gsub("[^A-Za-z0-9]+", "_", gsub("^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", x))

# One-hot coding of a factor against its first level, plus an indicator of missing values if any.
one_hot <- function(f, name) {
  f <- factor(f, ordered = FALSE)
  lv <- levels(f)
  cols <- list()
  for (l in lv[-1]) cols[[paste0(name, "_", clean(l))]] <- as.integer(!is.na(f) & f == l)
  if (anyNA(f)) cols[[paste0(name, "_NA")]] <- as.integer(is.na(f))
  cols
}

# A feature block: numeric columns as they are (no missing values allowed), factors one-hot.
features <- function(d) {
  cols <- list()
  for (n in names(d)) {
    v <- d[[n]]
    if (is.factor(v) || is.character(v) || is.logical(v)) {
      cols <- c(cols, one_hot(v, clean(n)))
    } else {
      if (anyNA(v)) stop("numeric column ", n, " has missing values")
      cols[[clean(n)]] <- v
    }
  }
  cols
}

write_table <- function(name, label, groups, feats, rows) {
  stopifnot(length(label) == rows, all(label %in% c(0L, 1L)))
  num <- lapply(feats, function(v) sprintf("%.10g", v))
  grp <- lapply(groups, function(v) ifelse(is.na(v), "", as.character(v)))
  names(grp) <- paste0("group_", names(groups))
  d <- data.frame(label = as.integer(label), grp, num, check.names = FALSE, stringsAsFactors = FALSE)
  stopifnot(nrow(d) == rows)
  file <- file.path(out_dir, paste0(name, ".csv"))
  write.csv(d, file, row.names = FALSE, quote = FALSE)
  message(sprintf("data.R: %s: %d rows, %d features, base rate %.4f -> %s", name, nrow(d), length(feats),
                  mean(label), file))
}

have <- function(pkg, name) {
  if (requireNamespace(pkg, quietly = TRUE)) return(TRUE)
  message("data.R: ", name, ": the R package ", pkg, " is not installed (Debian r-cran-", tolower(pkg),
          "); skipped")
  FALSE
}

load_data <- function(pkg, what) {
  e <- new.env()
  utils::data(list = what, package = pkg, envir = e)
  get(what, envir = e)
}

make_income <- function() {
  if (!have("kernlab", "income")) return()
  d <- load_data("kernlab", "income")
  # INCOME is ordered in 9 classes; the median observation falls in the 5th, [25,000, 30,000).
  stopifnot(levels(d$INCOME)[5] == "[25.000-30.000)")
  label <- as.integer(as.integer(d$INCOME) >= 6)
  eth <- as.character(d$ETHNIC.CLASS)
  eth4 <- ifelse(eth == "White", "white", ifelse(eth == "Hispanic", "hispanic",
                 ifelse(eth == "Black", "black", "other")))
  groups <- list(sex = ifelse(d$SEX == "F", "female", "male"), ethnic = eth4)
  feats <- features(d[, setdiff(names(d), c("INCOME", "SEX", "ETHNIC.CLASS"))])
  write_table("income", label, groups, feats, 8993)
}

make_hmda <- function() {
  if (!have("AER", "hmda")) return()
  d <- load_data("AER", "HMDA")
  label <- as.integer(d$deny == "yes")
  groups <- list(afam = ifelse(d$afam == "yes", "african_american", "other"))
  feats <- features(d[, setdiff(names(d), c("deny", "afam"))])
  write_table("hmda", label, groups, feats, 2380)
}

make_german <- function() {
  if (!have("caret", "german")) return()
  d <- load_data("caret", "GermanCredit")
  personal <- grep("^Personal\\.", names(d), value = TRUE)
  female <- d$Personal.Female.NotSingle == 1 | d$Personal.Female.Single == 1
  stopifnot(all(rowSums(d[, personal]) == 1))
  label <- as.integer(d$Class == "Good")
  groups <- list(sex = ifelse(female, "female", "male"), age = ifelse(d$Age < 25, "under25", "25plus"))
  rest <- d[, setdiff(names(d), c("Class", "Age", personal))]
  # caret's table holds constant dummies (levels absent from the data); they carry nothing.
  rest <- rest[, vapply(rest, function(v) length(unique(v)) > 1, logical(1))]
  rest$single <- as.integer(d$Personal.Male.Single == 1 | d$Personal.Female.Single == 1)
  write_table("german", label, groups, features(rest), 1000)
}

make_arrests <- function() {
  if (!have("carData", "arrests")) return()
  d <- load_data("carData", "Arrests")
  label <- as.integer(d$released == "Yes")
  colour <- tolower(as.character(d$colour))
  groups <- list(colour = colour, colour_sex = paste0(colour, "_", tolower(as.character(d$sex))))
  feats <- features(d[, c("year", "age", "employed", "citizen", "checks")])
  write_table("arrests", label, groups, feats, 5226)
}

dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
for (w in wanted) {
  f <- switch(w, income = make_income, hmda = make_hmda, german = make_german, arrests = make_arrests,
              stop("data.R: unknown table '", w, "' (expected income, hmda, german or arrests)"))
  f()
}
