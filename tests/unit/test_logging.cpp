// core/src/logging.cpp: what each verbosity lets through to stderr, the run log file (every level,
// appended, flushed at once), and progress lines off a terminal.
#include <gtest/gtest.h>

#include <functional>
#include <regex>

#include "nexp/runtime/logging.hpp"
#include "nexp/runtime/util.hpp"
#include "support.hpp"

using namespace nexp;
using namespace nexp::test;

namespace {

// What `fn` writes to stderr at verbosity `v`; the verbosity before is restored.
std::string stderr_at(Verbosity v, const std::function<void()>& fn) {
  const Verbosity before = verbosity();
  configure_logging(v);
  ::testing::internal::CaptureStderr();
  fn();
  const std::string out = ::testing::internal::GetCapturedStderr();
  configure_logging(before);
  return out;
}

void one_of_each() {
  logger().debug("d {}", 1);
  logger().info("i {}", 2);
  logger().warn("w {}", 3);
  logger().error("e {}", 4);
}

}  // namespace

// Off a terminal (ctest, pipes, Slurm logs): plain lines, warnings and errors prefixed; a progress
// bar prints its final line only (the next would come after 10 s), and nothing when quiet.
TEST(Logging, VerbosityChoosesWhatReachesStderr) {
  if (stderr_is_live()) GTEST_SKIP() << "stderr is a terminal: lines carry colours and redraws";
  EXPECT_EQ(stderr_at(Verbosity::Quiet, one_of_each), "warning: w 3\nerror: e 4\n");
  EXPECT_EQ(stderr_at(Verbosity::Normal, one_of_each), "i 2\nwarning: w 3\nerror: e 4\n");
  EXPECT_EQ(stderr_at(Verbosity::Verbose, one_of_each), "debug: d 1\ni 2\nwarning: w 3\nerror: e 4\n");
  configure_logging(Verbosity::Verbose);
  EXPECT_EQ(verbosity(), Verbosity::Verbose);
  configure_logging(Verbosity::Quiet);

  auto count_to_four = [] {
    Progress p = make_progress(4, "load");
    for (int i = 0; i < 3; ++i) p.advance();
    p.note("loss 0.5");
    p.advance();
  };
  const std::string progress = stderr_at(Verbosity::Normal, count_to_four);
  EXPECT_TRUE(std::regex_match(progress, std::regex(R"(load: 4/4 \(100%\), \d+\.\ds elapsed, ETA 0\.0s, loss 0\.5\n)")))
      << progress;
  EXPECT_EQ(stderr_at(Verbosity::Quiet, count_to_four), "");
}

// A run's logger writes every level to its log file, whatever the verbosity, after what the file
// held (a resumed run appends), each line readable at once; stderr gets what the verbosity lets
// through, prefixed with the run's name.
TEST(Logging, TheRunLogFileReceivesEveryMessage) {
  if (stderr_is_live()) GTEST_SKIP() << "stderr is a terminal: lines carry colours and redraws";
  TempDir dir;
  const auto file = dir.write("log.txt", "an earlier attempt\n");
  const auto other = dir.path / "other.txt";
  const std::string err = stderr_at(Verbosity::Quiet, [&] {
    auto log = make_run_logger("trial-3", file);
    auto second = make_run_logger("trial-4", other);
    log->debug("step {}", 10);
    log->info("loss {:.2f}", 0.25);
    second->info("elsewhere");
    log->warn("slow");
    // No flush and the loggers still open: each line is in the file already.
    const std::string text = read_file(file);
    const std::string stamp = R"(\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] )";
    EXPECT_TRUE(std::regex_match(text, std::regex("an earlier attempt\n" + stamp + R"(\[debug\] step 10\n)" + stamp +
                                                  R"(\[info\] loss 0\.25\n)" + stamp + R"(\[warning\] slow\n)")))
        << text;
    EXPECT_TRUE(std::regex_match(read_file(other), std::regex(stamp + R"(\[info\] elsewhere\n)"))) << read_file(other);
  });
  EXPECT_EQ(err, "[trial-3] warning: slow\n");
}
