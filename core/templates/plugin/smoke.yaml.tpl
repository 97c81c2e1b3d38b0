# A few seconds: the conformance suite runs this config.
method: @SLUG@.fit
params:
  steps: 100
  checkpoint_every: 10
dataset:
  name: @SLUG@.linear
  n: 100
  d: 4
metrics: [mse, weight_error]
device: cpu
seed: 0
