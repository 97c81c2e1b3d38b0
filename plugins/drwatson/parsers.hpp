#pragma once
// Real inputs, turned into the same events the simulator produces (symptom kinds of the GPU
// platform's vocabulary), so the rules and the model diagnose them like simulated incidents:
//   - kernel log lines (dmesg, journalctl -k, /var/log/kern.log): NVIDIA Xid lines, MCE, EDAC, PCIe AER,
//     soft lockups, panics, NVMe errors, segfaults, OOM kills, mlx5 link changes, NCCL watchdog lines;
//   - dcgm-exporter's Prometheus text (DCGM_FI_DEV_* gauges and counters);
//   - `nvidia-smi -q` text (temperatures, ECC counts, remapped rows, clock event reasons);
//   - a HAL device's telemetry (nexp::Telemetry) sampled before and after an active probe.
// Each text format has a writer too, so that parse(write(x)) == x can be tested.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nexp/device.hpp>

#include "fleet.hpp"
#include "incidents.hpp"

namespace drwatson {

// Maps the GPU platform's raw codes (XID_79, DCGM_310, MCE, ...) to symptom kinds.
class RawCodes {
 public:
  RawCodes(const FleetSpec& fleet, int platform);
  int kind(const std::string& raw) const;  // kNoIndex when unknown
  const std::string& raw(int kind) const;  // "" when the platform cannot see it

 private:
  std::map<std::string, int> kind_;
  std::vector<std::string> raw_;
};

// ---- kernel log
struct LogEvent {
  std::string raw;     // XID_79, MCE, ...
  int slot = 0;        // device index (Xid lines: rank of the PCI bus id among those seen), else host/network
  double seconds = 0;  // timestamp in seconds (dmesg's since boot, or wall clock); 0 when the line has none
  double value = 0;
  std::string bus;     // PCI bus id for Xid lines
};
std::optional<LogEvent> parse_kernel_line(const std::string& line);
std::vector<LogEvent> parse_kernel_log(const std::string& text);  // slots assigned by sorted bus id
std::string format_kernel_line(const LogEvent& e);                // dmesg style, parses back to e

// ---- dcgm-exporter
struct DcgmSample {
  std::string field;  // DCGM_FI_DEV_GPU_TEMP, ...
  int gpu = 0;
  double value = 0;
  bool operator==(const DcgmSample& o) const { return field == o.field && gpu == o.gpu && value == o.value; }
};
std::vector<DcgmSample> parse_dcgm(const std::string& text);
std::string format_dcgm(const std::vector<DcgmSample>& samples);

// ---- nvidia-smi -q
struct SmiGpu {
  std::string bus;
  double gpu_temp = -1, memory_temp = -1;  // C, -1 when absent
  double dram_correctable = 0, dram_uncorrectable = 0, sram_uncorrectable = 0;  // volatile ECC
  double remapped_uncorrectable = 0;
  bool remap_pending = false, remap_failure = false, hw_slowdown = false;
  bool operator==(const SmiGpu& o) const;
};
std::vector<SmiGpu> parse_nvidia_smi(const std::string& text);
std::string format_nvidia_smi(const std::vector<SmiGpu>& gpus);

// ---- into events (one NodeView: the machine being diagnosed)
// Kernel log: times relative to the last line (the interruption), in minutes.
NodeView events_from_log(const std::vector<LogEvent>& log, const RawCodes& codes);
NodeView events_from_dcgm(const std::vector<DcgmSample>& samples, const RawCodes& codes);
NodeView events_from_smi(const std::vector<SmiGpu>& gpus, const RawCodes& codes);

// What an active probe on a device measured (diagnose.cpp runs it).
struct ProbeResult {
  int steps = 0;
  double seconds_per_step = 0, expected_seconds_per_step = 0;
  bool wrong_answer = false;  // the known-answer check failed
  bool timed_out = false;     // a step took far longer than expected (the device hung)
};
// HAL telemetry before and after the probe: counters that moved, readings out of range, link state.
// Keys read: temperature_c, throttled, ecc_sbe_total, ecc_dbe_total, retired_pages, pcie_replay_total,
// link_up, link_errors_total (nexp/device.hpp's telemetry keys).
NodeView events_from_telemetry(const nexp::Telemetry& before, const nexp::Telemetry& after, const ProbeResult& probe,
                               const FleetSpec& fleet, int platform, int slot);

// Merges events of several sources into one view (sorted by time).
void merge_into(NodeView& into, const NodeView& from);

}  // namespace drwatson
