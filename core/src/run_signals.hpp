#pragma once
// Stop signals and crashes while a run is in progress (internal to core; used by run.cpp).
//
// The protocol, whatever the timing of the signals:
//   - The first SIGINT, SIGTERM or SIGUSR1 sets a flag that the method polls (ctx.stop_requested());
//     it stops at its next checkpoint and the run ends `interrupted` (reason checkpointed), exit 1.
//   - A second one while the method runs aborts at once: the handler writes a status.json prepared in
//     advance (`interrupted`, reason aborted), appends a line to log.txt and exits with 130. Only
//     async-signal-safe calls are made (open, write, rename, time, _exit). Checkpoints are committed
//     by renaming LATEST, so the last committed one is intact and --resume continues from it.
//   - A second one before the method starts, or after it returned while core writes the final
//     status, is recorded: core finishes the run as it stands and the process exits with 130.
// The hand-over from "method running" to "core finishing" is one compare-and-swap on a lock-free
// atomic that the handler also uses, so exactly one of them decides what status.json says.
// A fatal signal (a crash) while the method runs writes a prepared `failed` status and re-raises.
#include <signal.h>

#include <filesystem>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace nexp::detail {

class RunSignals {
 public:
  // Installs the handlers when `enabled` (else only the test's stop request works).
  explicit RunSignals(bool enabled);
  ~RunSignals();
  RunSignals(const RunSignals&) = delete;
  RunSignals& operator=(const RunSignals&) = delete;

  // The statuses the handlers write (each gets its "ended" time when written) and the line appended
  // to the run's log on an abort.
  void prepare(const std::filesystem::path& status_file, const nlohmann::json& aborted,
               const nlohmann::json& crashed, const std::filesystem::path& log_file, const std::string& abort_line);
  // The method starts: from now on a second stop signal aborts the process. When two have already
  // arrived, aborts right here.
  void enter_method();
  // The method returned: from now on a second stop signal is only recorded. Waits for the process
  // to end when a handler on another thread is aborting it at this moment.
  void leave_method();

  static bool stop_requested();        // a stop signal came, or the test asked (request_stop)
  static bool second_signal();         // a second stop signal came: the process exits with 130
  static void request_stop();          // RunOptions::stop_after_checkpoints

 private:
  bool installed_ = false;
};

// Counts SIGINT and SIGTERM while in scope, for a process that starts others (the sweep launchers,
// nexp reproduce) and passes the signals on to them; the previous handlers come back at the end.
class SignalCounter {
 public:
  SignalCounter();
  ~SignalCounter();
  SignalCounter(const SignalCounter&) = delete;
  SignalCounter& operator=(const SignalCounter&) = delete;
  static int count();  // signals received since the innermost counter began

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

}  // namespace nexp::detail
