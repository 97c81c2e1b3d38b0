# Bad input: exit code 2 and a one-paragraph message naming the key, file and line; never a stack
# trace or a bare yaml-cpp message.
source "$(dirname "$0")/lib.sh"

check_error() {  # expected part, command...
  local part=$1; shift
  expect_exit 2 "$@"
  expect_contains "$ERR" "$part" "'$*'"
  [[ $ERR != *"terminate called"* && $ERR != *"what():"* ]] || fail "raw exception text: $ERR"
  [[ $(grep -c "error:" <<<"$ERR") == 1 ]] || fail "one error paragraph expected: $ERR"
}

cp "$SCAFFOLD_SMOKE" good.yaml
printf 'method: scaffold_check.fit\nparams:\n  steps: [1, 2\n' > malformed.yaml
printf 'method: scaffold_check.fit\ndataset: scaffold_check.linear\nparams:\n  stepz: 3\n' > unknown.yaml
printf 'method: scaffold_check.fit\ndataset: scaffold_check.linear\nexperiment: x_${params.nope}\n' > interp.yaml

check_error "malformed YAML" nx run malformed.yaml
check_error "malformed.yaml', line 4" nx validate malformed.yaml
check_error "Did you mean 'steps'?" nx validate unknown.yaml
check_error "unknown.yaml', line 4" nx validate unknown.yaml
check_error "expected int, found 'abc'" nx validate good.yaml params.steps=abc
check_error "above the maximum 1" nx validate good.yaml params.lr=3
check_error "Did you mean 'scaffold_check.fit'?" nx validate good.yaml method=scaffold_check.fitt
check_error "does not exist" nx run missing.yaml
check_error "is not set in the config" nx validate interp.yaml
check_error "has no '='" nx validate good.yaml params.steps
check_error "no run 'nosuchrun'" nx show nosuchrun
check_error "device 'cuda:0' does not exist here" nx run good.yaml device=cuda:0
echo "cli_errors: ok"
