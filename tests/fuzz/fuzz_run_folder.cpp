// Fuzz target for reading run folders (core/src/tracking.cpp, trial_state.cpp): what `nexp show`,
// `nexp runs --reindex`, `nexp compare` and a sweep's resume read from a folder that a crash, a full
// disk or a person may have left in any state. The input is the folder's status.json, meta.json,
// metrics.jsonl and config.yaml, separated by lines `#%file`. For any input:
//   1. reading the folder, its metric series and its trial state returns or refuses the folder with
//      a DataError, nothing else;
//   2. a folder that reads is indexed (upsert and reindex) and found again by its id, with the same
//      status; its record converts to JSON.
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "fuzz_registry.hpp"
#include "fuzz_support.hpp"
#include "nexp/runtime/sweep.hpp"
#include "nexp/runtime/tracking.hpp"
#include "nexp/text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nexp;
  namespace fs = std::filesystem;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto parts = fuzz::split_parts(input, "#%file", 4);
  (void)fuzz::registry();  // quiet logging
  const fs::path runs = fuzz::scratch() / "runs";
  const fs::path folder = runs / "exp" / "20260101-000000-0123abcd-beef";
  fs::create_directories(folder);
  const char* names[] = {"status.json", "meta.json", "metrics.jsonl", "config.yaml"};
  for (int i = 0; i < 4; ++i) std::ofstream(folder / names[i], std::ios::binary | std::ios::trunc) << parts[i];
  static std::unique_ptr<RunIndex> index;
  if (!index) index = std::make_unique<RunIndex>(runs);

  SweepTrial trial;
  trial.folder = folder;
  fuzz::accepted("run_folder", input, [&] { (void)read_metric_series(folder); });
  fuzz::accepted("run_folder", input, [&] { (void)trial_status(trial); });
  RunRecord record;
  if (!fuzz::accepted("run_folder", input, [&] { record = read_run_folder(folder); })) return 0;
  fuzz::must("run_folder", input, "a folder that reads cannot be indexed", [&] {
    (void)json_dump(run_to_json(record), 2);
    index->upsert(record);
    if (index->reindex() != 1) fuzz::fail("run_folder", "reindex does not find the one run folder", input);
    const auto found = index->find(record.id);
    if (!found || found->status != record.status)
      fuzz::fail("run_folder", "an indexed run is not found again with its status", input);
  });
  return 0;
}
