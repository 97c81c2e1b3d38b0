// Fuzz target for the drwatson plugin's readers of real machine logs (plugins/drwatson/parsers.cpp):
// kernel logs (dmesg, journalctl -k), dcgm-exporter's Prometheus text and `nvidia-smi -q` text. Each
// reader skips the lines it does not know, so the whole input goes to all three. For any input:
//   1. no reader throws or crashes: a line it cannot read is skipped;
//   2. every kernel-log event read survives its writer: format_kernel_line reads back as the same code
//      (and, for an Xid line, the same PCI bus).
#include <cmath>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "parsers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<drwatson::LogEvent> events;
  nexp::fuzz::must("drwatson_logs", input, "parse_kernel_log", [&] { events = drwatson::parse_kernel_log(input); });
  nexp::fuzz::must("drwatson_logs", input, "parse_dcgm", [&] { (void)drwatson::parse_dcgm(input); });
  nexp::fuzz::must("drwatson_logs", input, "parse_nvidia_smi", [&] { (void)drwatson::parse_nvidia_smi(input); });
  for (const auto& e : events) {
    if (!std::isfinite(e.seconds) || !std::isfinite(e.value))
      nexp::fuzz::fail("drwatson_logs", "an event with a time or value that is not finite", input);
    nexp::fuzz::must("drwatson_logs", input, "format_kernel_line", [&] {
      const auto back = drwatson::parse_kernel_line(drwatson::format_kernel_line(e));
      if (!back || back->raw != e.raw || back->bus != e.bus)
        nexp::fuzz::fail("drwatson_logs", "an event reads back as another: " + drwatson::format_kernel_line(e), input);
    });
  }
  return 0;
}
