# The results table of README.md, as data. `nexp reproduce @SLUG@` runs every row and compares each
# number with the value recorded here; `--write-readme` regenerates the README's table from this file;
# `--record` writes newly measured values in. One row per claim of the paper: the claim, the command
# that measures it, the numbers it reads (a summary metric, or a column of an artifact CSV), the value
# recorded and how to compare (exact at the recorded digits, {abs: x}, {rel: x}, {ci: [low, high]}),
# the cost in CPU-seconds, and `quick: true` when it runs in seconds (CI runs the quick rows).
# Schema: core/include/nexp/runtime/reproduce.hpp.
plugin: @SLUG@
rows:
  - id: smoke
    claim: "(smoke scale) gradient descent recovers a linear model's weights"
    command: {config: @CONFIG_DIR@/smoke.yaml}
    checks:
      - {id: mse, metric: mse, recorded: 0.0084364}                  # exact: equal at these digits
      - {id: weight_error, metric: weight_error, recorded: 0.022946}
    text: {measured: "training MSE {mse}, weight error {weight_error}"}
    cost: 2.3
    quick: true
