#!/usr/bin/env bash
# A remote environment (dataset.env=http) without what it needs: the planner teacher (a server exposes
# no world to plan in), no url, a url that is not one, held-out tasks that overlap the training tasks.
# `nexp run` exits 2 with a message that says what to set, and contacts no server.
source "${SOURCE_DIR:?set by ctest}/tests/cli/plugin_lib.sh"
run() { nxp -q run configs/agent_sft/smoke.yaml dataset.env=http "$@"; }
# refused (plugin_lib.sh), and no server contacted.
refused_offline() {
  refused "$@"
  if grep -qF "/create" <<<"$REFUSED_OUTPUT"; then fail "${*:2}: a server was contacted: $REFUSED_OUTPUT"; fi
}

refused_offline "Expected params.teacher=llm" dataset.url=http://127.0.0.1:9
refused_offline "dataset.url is empty" params.teacher=llm
refused_offline "expected the AgentGym server's address" dataset.url=localhost:36001 params.teacher=llm
refused_offline "overlap the training tasks" dataset.url=http://127.0.0.1:9 dataset.eval_first=100 params.teacher=llm
echo "ok"
