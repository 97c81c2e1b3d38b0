# @SLUG@

**Paper:** <title>, <authors>, <venue year>. **Claim:** <the abstract's headline claim>.

## What is implemented
<the method, where each equation lives (file and function), what was left out>

## What is scaled down, and why
<sizes, data (real or simulated, and why), budgets>

## How to run
```
nexp run @CONFIG_DIR@/smoke.yaml
nexp reproduce @RESULTS_ARG@              # every row of the results table, compared with results.yaml
```

## Results
One row per claim of the paper, each an entry of `results.yaml` (the claim, the command, the numbers
it reads, the values recorded); `nexp reproduce @RESULTS_ARG@` re-runs them and compares.

<!-- results:main (generated from results.yaml: edit that file, then `nexp reproduce @SLUG@ --write-readme`) -->

| claim (paper) | nexp measured | command |
|---|---|---|
| (smoke scale) gradient descent recovers a linear model's weights | training MSE 0.0084364, weight error 0.022946 | `nexp run @CONFIG_DIR@/smoke.yaml` |

<!-- /results:main -->

## Deviations from the paper
<what differs and why>
