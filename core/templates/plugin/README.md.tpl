# @SLUG@

**Paper:** <title>, <authors>, <venue year>. **Claim:** <the abstract's headline claim>.

## What is implemented
<the method, where each equation lives (file and function), what was left out>

## What is scaled down, and why
<sizes, data (real or simulated, and why), budgets>

## How to run
```
nexp run configs/@SLUG@/smoke.yaml
```

## Results
| claim (paper) | nexp measured | command |
|---|---|---|
| <number> | <number> | `nexp run configs/@SLUG@/<experiment>.yaml` |

## Deviations from the paper
<what differs and why>
