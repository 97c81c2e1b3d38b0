// agent_sft: which teacher data to buy for agent SFT. Short unfiltered teacher continuations from
// states the student reached, against behaviour cloning and success-filtered teacher trajectories, at
// a matched supervision budget, on three text environments. Registers the plugin's components.
#include <nexp/nexp.hpp>

#include "experiments.hpp"

namespace {

using nexp::Direction;

void register_metrics(nexp::Registrar& r) {
  for (const char* c : {"bc", "cont", "filtered", "hard"}) {
    const std::string n = c;
    r.metric("success_" + n, Direction::Maximize, "held-out task success of the student trained on the " + n +
                                                      " corpus (mean over seeds)");
    r.metric("state_coverage_" + n, Direction::None, "distinct abstract states at the kept teacher steps of " + n);
    r.metric("discard_share_" + n, Direction::None, "share of the teacher steps of " + n + " that the filter discarded");
    r.metric("teacher_steps_" + n, Direction::None, "teacher steps generated for " + n + " (mean over seeds)");
    r.metric("rl_early_success_" + n, Direction::Maximize, "success after the early REINFORCE updates from " + n);
    r.metric("rl_late_success_" + n, Direction::Maximize, "success after all REINFORCE updates from " + n);
  }
  r.metric("gain_cont_vs_bc", Direction::Maximize, "success of cont minus BC, paired over seeds");
  r.metric("gain_cont_vs_filtered", Direction::Maximize, "success of cont minus filtered, paired over seeds");
  r.metric("gain_cont_vs_hard", Direction::Maximize, "success of cont minus hard, paired over seeds");
  r.metric("teacher_success", Direction::None, "success of the noisy planner teacher on the evaluation tasks");
  r.metric("success_cont_tenth", Direction::Maximize, "success of cont at a tenth of the budget, no RL");
  r.metric("success_bc_full_rl", Direction::Maximize, "success of BC at the full budget plus REINFORCE");
  r.metric("gap", Direction::Maximize, "success_cont_tenth minus success_bc_full_rl, paired over seeds");
  r.metric("kept_steps_cont", Direction::None, "teacher steps kept in the cont corpus");
}

void register_components(nexp::Registrar& r) {
  register_metrics(r);
  r.dataset<agent_sft::EnvOptions>("agent_sft.env",
                                   "a text environment (linklookup, household, minishell, or http: an AgentGym "
                                   "server) and its held-out tasks",
                                   agent_sft::make_env_set);
  r.method("agent_sft.sft", "SFT from a BC warm start on each construction's corpus at a matched budget",
           agent_sft::run_sft)
      .options<agent_sft::SftOptions>()
      .produces({"success_bc", "success_cont", "success_filtered", "success_hard", "gain_cont_vs_bc",
                 "gain_cont_vs_filtered", "discard_share_filtered", "discard_share_hard", "state_coverage_cont",
                 "state_coverage_hard", "teacher_success"})
      .accepts({"agent_sft.env"});
  r.method("agent_sft.tenth", "cont at a tenth of the budget without RL against BC at the full budget plus RL",
           agent_sft::run_tenth)
      .options<agent_sft::TenthOptions>()
      .produces({"success_cont_tenth", "success_bc_full_rl", "gap", "teacher_success"})
      .accepts({"agent_sft.env"});
  r.method("agent_sft.rl", "REINFORCE on the success reward from each construction's SFT checkpoint",
           agent_sft::run_rl)
      .options<agent_sft::RlRunOptions>()
      .produces({"rl_early_success_bc", "rl_early_success_cont", "rl_early_success_filtered",
                 "rl_early_success_hard", "rl_late_success_bc", "rl_late_success_cont", "rl_late_success_filtered",
                 "rl_late_success_hard"})
      .accepts({"agent_sft.env"});
  r.method("agent_sft.export", "each construction's corpus as chat JSONL with a loss mask (artifacts/corpus_<c>.jsonl)",
           agent_sft::run_export)
      .options<agent_sft::ExportOptions>()
      .produces({"kept_steps_cont"})
      .accepts({"agent_sft.env"});
}

}  // namespace

NEXP_PLUGIN(agent_sft, "0.1.0",
            "short unfiltered teacher continuations at student-reached states vs behaviour cloning and "
            "success-filtered teacher trajectories, at a matched supervision budget, on three text environments",
            "A Few Teacher Steps Go a Long Way: Cost-Efficient On-Policy Data Augmentation for Agent Post-Training "
            "(NeurIPS 2026)",
            register_components)
