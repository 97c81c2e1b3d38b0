#pragma once
// The processes of a distributed run (a config's `distributed:` section; internal to core, used by
// run.cpp). The parent `nexp run` prepares the run folder and starts one `nexp run-rank FOLDER` per
// rank, here with fork/exec, or as the tasks of one `srun` inside a Slurm allocation that has them.
// Each rank learns who it is from its environment. The parent waits for all of them; the first rank
// that fails (an error, a crash, a collective past the timeout) fails the run, and the parent ends
// the others: SIGTERM to their process group, SIGKILL two seconds later. A rank whose parent dies
// is killed by the kernel (PR_SET_PDEATHSIG). Stop signals reach the parent and are passed on once
// (as SIGTERM).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace nexp::detail {

// Who this process is in a distributed run: set by the parent (NEXP_RANK, NEXP_WORLD_SIZE,
// NEXP_RENDEZVOUS, NEXP_RANK_HOST, NEXP_RESUMING), or by srun (SLURM_PROCID) under the parent's plan.
struct RankEnv {
  int rank = 0;
  int size = 1;
  std::string rendezvous;  // file:<path> or tcp:<host>:<port>
  std::string host = "127.0.0.1";
  bool resuming = false;
  static std::optional<RankEnv> from_environment();
};

struct RanksLaunch {
  std::filesystem::path folder;
  int processes = 1;
  double timeout_seconds = 60;
  bool resuming = false;
  std::vector<std::string> nexp_command;  // the nexp executable and its global options (--plugin-dir ...)
};

struct RanksOutcome {
  bool failed = false;
  int failed_rank = -1;
  std::string error;          // "rank 1 ...": what the failed rank said, or how it died
  bool config_error = false;  // the failed rank exited with 2: bad input (the run then exits 2 too)
};

// Starts the ranks and waits for all of them. Never leaves one running when it returns.
RanksOutcome run_ranks(const RanksLaunch& launch);

// What a rank that fails writes for the parent (<folder>/rank<k>.error): the parent puts it in status.json.
void write_rank_error(const std::filesystem::path& folder, int rank, const std::string& error) noexcept;

}  // namespace nexp::detail
