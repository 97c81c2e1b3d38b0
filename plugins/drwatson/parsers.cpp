#include "parsers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <set>
#include <sstream>

namespace drwatson {

RawCodes::RawCodes(const FleetSpec& fleet, int platform) {
  const auto& codes = fleet.platforms[static_cast<std::size_t>(platform)].codes;
  for (std::size_t k = 0; k < codes.size(); ++k) {
    raw_.push_back(codes[k].raw);
    if (!codes[k].raw.empty()) kind_.emplace(codes[k].raw, static_cast<int>(k));  // the first kind wins
  }
}
int RawCodes::kind(const std::string& raw) const {
  auto it = kind_.find(raw);
  return it == kind_.end() ? kNoIndex : it->second;
}
const std::string& RawCodes::raw(int kind) const { return raw_[static_cast<std::size_t>(kind)]; }

namespace {
// Appends the event that `raw` names; codes outside the platform's vocabulary are not its events.
void add_event(NodeView& v, const RawCodes& codes, const std::string& raw, int slot, double minutes, double value) {
  const int kind = codes.kind(raw);
  if (kind != kNoIndex) v.events.push_back({kind, slot, minutes, value});
}
}  // namespace

// ---------------------------------------------------------------- kernel log

namespace {

// What the rest of a kernel line says, after the timestamp.
struct LinePattern {
  std::regex re;
  std::string raw;
  int slot;
  int value_group;  // capture group holding a count, 0 for none
};

const std::vector<LinePattern>& line_patterns() {
  static const std::vector<LinePattern> p = {
      {std::regex(R"(mce: \[Hardware Error\])"), "MCE", kSlotHost, 0},
      {std::regex(R"(EDAC MC\d+: (\d+) CE)"), "EDAC_CE", kSlotHost, 1},
      {std::regex(R"(EDAC MC\d+: (\d+) UE)"), "EDAC_UE", kSlotHost, 1},
      {std::regex(R"(AER: (Uncorrected \(Fatal\)|Uncorrectable \(Fatal\)))"), "AER_FATAL", kSlotHost, 0},
      {std::regex(R"(AER: Corrected error)"), "AER_CORRECTED", kSlotHost, 0},
      {std::regex(R"(watchdog: BUG: soft lockup)"), "SOFT_LOCKUP", kSlotHost, 0},
      {std::regex(R"(Kernel panic)"), "KERNEL_PANIC", kSlotHost, 0},
      {std::regex(R"(nvme\d+.*(I/O .*error|timeout))"), "NVME_ERR", kSlotHost, 0},
      {std::regex(R"(segfault at)"), "SEGFAULT", kSlotHost, 0},
      {std::regex(R"(Out of memory: Killed process)"), "OOM_KILL", kSlotHost, 0},
      {std::regex(R"(mlx5_core.*[Ll]ink down)"), "MLX5_LINK_FLAP", kSlotNetwork, 0},
      {std::regex(R"(Watchdog caught collective operation timeout)"), "NCCL_WATCHDOG", kSlotJob, 0},
  };
  return p;
}

// The canonical text of each non-Xid code, as format_kernel_line writes it.
std::string canonical_text(const LogEvent& e) {
  const int n = static_cast<int>(e.value);
  if (e.raw == "MCE") return "mce: [Hardware Error]: Machine check events logged";
  if (e.raw == "EDAC_CE") return fmt::format("EDAC MC0: {} CE memory read error on CPU_SrcID#0_Ha#0_Chan#0_DIMM#0", n);
  if (e.raw == "EDAC_UE") return fmt::format("EDAC MC0: {} UE memory read error on CPU_SrcID#0_Ha#0_Chan#0_DIMM#0", n);
  if (e.raw == "AER_FATAL") return "pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:01:00.0";
  if (e.raw == "AER_CORRECTED") return "pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0";
  if (e.raw == "SOFT_LOCKUP") return "watchdog: BUG: soft lockup - CPU#12 stuck for 22s! [python:4242]";
  if (e.raw == "KERNEL_PANIC") return "Kernel panic - not syncing: Fatal exception";
  if (e.raw == "NVME_ERR") return "nvme nvme0: I/O 42 QID 3 timeout, aborting";
  if (e.raw == "SEGFAULT") return "python[4242]: segfault at 0 ip 00007f0000000000 sp 00007ffc00000000 error 4";
  if (e.raw == "OOM_KILL") return "Out of memory: Killed process 4242 (python) total-vm:1024kB";
  if (e.raw == "MLX5_LINK_FLAP") return "mlx5_core 0000:5e:00.0 ibp94s0: Link down";
  if (e.raw == "NCCL_WATCHDOG") return "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE)";
  return e.raw;
}

// A number of a log line: nullopt when the text is not one, or one too large to be a count or a time
// (such a line is not read: these readers skip what they cannot make sense of).
std::optional<double> finite_number(const std::string& text, double limit = 1e15) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || std::fabs(v) > limit) return std::nullopt;
  return v;
}

double parse_timestamp(const std::string& line, std::size_t& rest) {
  static const std::regex dmesg(R"(^\s*\[\s*(\d+\.\d+)\]\s*)");
  static const std::regex iso(R"(^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(\.\d+)?\S*\s+)");
  std::smatch m;
  if (std::regex_search(line, m, dmesg)) {
    if (const auto seconds = finite_number(m[1])) {
      rest = static_cast<std::size_t>(m.length(0));
      return *seconds;
    }
  }
  if (std::regex_search(line, m, iso)) {
    rest = static_cast<std::size_t>(m.length(0));
    // Days since a fixed epoch are enough: only differences matter.
    const int y = std::stoi(m[1]), mo = std::stoi(m[2]), d = std::stoi(m[3]);
    const long days = 365L * y + y / 4 + 31L * mo + d;
    return static_cast<double>(days) * 86400.0 + std::stoi(m[4]) * 3600.0 + std::stoi(m[5]) * 60.0 + std::stod(m[6].str() + (m[7].matched ? m[7].str() : ""));
  }
  rest = 0;
  return 0;
}

}  // namespace

std::optional<LogEvent> parse_kernel_line(const std::string& line) {
  static const std::regex xid(R"(NVRM: Xid \(PCI:([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-9])?)\): (\d+))");
  std::size_t rest = 0;
  const double seconds = parse_timestamp(line, rest);
  std::smatch m;
  const std::string body = line.substr(rest);
  LogEvent e;
  e.seconds = seconds;
  if (std::regex_search(body, m, xid)) {
    e.raw = "XID_" + m[2].str();
    e.bus = m[1].str();
    std::transform(e.bus.begin(), e.bus.end(), e.bus.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return e;
  }
  for (const auto& p : line_patterns())
    if (std::regex_search(body, m, p.re)) {
      e.raw = p.raw;
      e.slot = p.slot;
      if (p.value_group > 0) {
        const auto value = finite_number(m[static_cast<std::size_t>(p.value_group)], 2147483647.0);  // a count
        if (!value) return std::nullopt;
        e.value = *value;
      }
      return e;
    }
  return std::nullopt;
}

std::vector<LogEvent> parse_kernel_log(const std::string& text) {
  std::vector<LogEvent> out;
  std::istringstream in(text);
  std::string line;
  std::set<std::string> buses;
  while (std::getline(in, line))
    if (auto e = parse_kernel_line(line)) {
      if (!e->bus.empty()) buses.insert(e->bus);
      out.push_back(*e);
    }
  // Devices in bus order: the order nvidia-smi and CUDA number them in by default.
  const std::vector<std::string> order(buses.begin(), buses.end());
  for (auto& e : out)
    if (!e.bus.empty()) e.slot = static_cast<int>(std::find(order.begin(), order.end(), e.bus) - order.begin());
  return out;
}

std::string format_kernel_line(const LogEvent& e) {
  const std::string stamp = fmt::format("[{:12.6f}] ", e.seconds);
  if (e.raw.rfind("XID_", 0) == 0)
    return stamp + fmt::format("NVRM: Xid (PCI:{}): {}, pid=4242, name=python, Ch 00000008", e.bus, e.raw.substr(4));
  return stamp + canonical_text(e);
}

NodeView events_from_log(const std::vector<LogEvent>& log, const RawCodes& codes) {
  NodeView v;
  double last = 0;
  for (const auto& e : log) last = std::max(last, e.seconds);
  for (const auto& e : log) add_event(v, codes, e.raw, e.slot, (e.seconds - last) / 60.0, e.value);
  std::stable_sort(v.events.begin(), v.events.end(), [](const Event& a, const Event& b) { return a.minutes < b.minutes; });
  return v;
}

// ---------------------------------------------------------------- dcgm-exporter

std::vector<DcgmSample> parse_dcgm(const std::string& text) {
  static const std::regex sample(R"(^(DCGM_FI_[A-Z0-9_]+)\{([^}]*)\}\s+([-+0-9.eE]+|NaN))");
  static const std::regex gpu_label(R"((^|,)\s*gpu=\"(\d+)\")");
  std::vector<DcgmSample> out;
  std::istringstream in(text);
  std::string line;
  std::smatch m, g;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (!std::regex_search(line, m, sample)) continue;
    DcgmSample s;
    s.field = m[1];
    const std::string labels = m[2];
    if (std::regex_search(labels, g, gpu_label)) {
      const auto gpu = finite_number(g[2], 1e6);
      if (!gpu) continue;
      s.gpu = static_cast<int>(*gpu);
    }
    const auto value = m[3] == "NaN" ? std::optional<double>(std::nan("")) : finite_number(m[3]);
    if (!value) continue;
    s.value = *value;
    out.push_back(s);
  }
  return out;
}

std::string format_dcgm(const std::vector<DcgmSample>& samples) {
  std::string out;
  std::set<std::string> described;
  for (const auto& s : samples) {
    if (described.insert(s.field).second) {
      out += fmt::format("# HELP {} dcgm-exporter field.\n", s.field);
      out += fmt::format("# TYPE {} gauge\n", s.field);
    }
    out += fmt::format("{}{{gpu=\"{}\",UUID=\"GPU-{:08x}\",device=\"nvidia{}\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node\"}} {}\n",
                       s.field, s.gpu, static_cast<unsigned>(s.gpu), s.gpu, fmt::format("{:g}", s.value));
  }
  return out;
}

NodeView events_from_dcgm(const std::vector<DcgmSample>& samples, const RawCodes& codes) {
  NodeView v;
  auto add = [&](const std::string& raw, int gpu, double value) { add_event(v, codes, raw, gpu, 0.0, value); };
  for (const auto& s : samples) {
    if (std::isnan(s.value)) continue;
    const double x = s.value;
    if (s.field == "DCGM_FI_DEV_GPU_TEMP" && x > 70) add("DCGM_150", s.gpu, x - 70);
    else if (s.field == "DCGM_FI_DEV_MEMORY_TEMP" && x > 75) add("DCGM_140", s.gpu, x - 75);
    else if (s.field == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER" && x > 0) add("DCGM_202", s.gpu, x);
    else if (s.field == "DCGM_FI_DEV_XID_ERRORS" && x > 0) add(fmt::format("XID_{}", static_cast<long>(x)), s.gpu, 0);
    else if (s.field == "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL" && x > 0) add("DCGM_310", s.gpu, x);
    else if (s.field == "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL" && x > 0) add("XID_48", s.gpu, x);
    else if ((s.field == "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS" || s.field == "DCGM_FI_DEV_RETIRED_DBE") && x > 0)
      add("DCGM_393", s.gpu, x);
    else if (s.field == "DCGM_FI_DEV_ROW_REMAP_FAILURE" && x > 0) add("XID_64", s.gpu, 0);
    else if (s.field == "DCGM_FI_DEV_ROW_REMAP_PENDING" && x > 0) add("XID_63", s.gpu, 0);
    else if ((s.field == "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL" ||
              s.field == "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL") && x > 0)
      add("DCGM_409", s.gpu, x);
    else if (s.field == "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL" && x > 0) add("DCGM_439", s.gpu, x);
  }
  return v;
}

// ---------------------------------------------------------------- nvidia-smi -q

bool SmiGpu::operator==(const SmiGpu& o) const {
  return bus == o.bus && gpu_temp == o.gpu_temp && memory_temp == o.memory_temp && dram_correctable == o.dram_correctable &&
         dram_uncorrectable == o.dram_uncorrectable && sram_uncorrectable == o.sram_uncorrectable &&
         remapped_uncorrectable == o.remapped_uncorrectable && remap_pending == o.remap_pending &&
         remap_failure == o.remap_failure && hw_slowdown == o.hw_slowdown;
}

std::vector<SmiGpu> parse_nvidia_smi(const std::string& text) {
  static const std::regex header(R"(^GPU ([0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9]))");
  std::vector<SmiGpu> out;
  std::istringstream in(text);
  std::string line;
  std::vector<std::pair<std::size_t, std::string>> path;  // (indent, section) of the enclosing headings
  // "N/A" (a GPU without that sensor or counter) reads as `missing`.
  auto number = [](const std::string& v, double missing = 0.0) {
    try {
      return std::stod(v);
    } catch (...) {
      return missing;
    }
  };
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, header)) {
      out.emplace_back();
      out.back().bus = m[1];
      path.clear();
      continue;
    }
    if (out.empty()) continue;
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    while (!path.empty() && path.back().first >= indent) path.pop_back();
    const auto colon = line.find(" : ");
    std::string key = line.substr(indent, colon == std::string::npos ? std::string::npos : colon - indent);
    key.erase(key.find_last_not_of(' ') + 1);
    if (colon == std::string::npos) {
      path.emplace_back(indent, key);
      continue;
    }
    std::string value = line.substr(colon + 3);
    value.erase(value.find_last_not_of(" \r") + 1);
    auto under = [&](const std::string& section) {
      return std::any_of(path.begin(), path.end(), [&](const auto& p) { return p.second == section; });
    };
    SmiGpu& g = out.back();
    if (key == "GPU Current Temp" && under("Temperature")) g.gpu_temp = number(value, -1);
    else if (key == "Memory Current Temp" && under("Temperature")) g.memory_temp = number(value, -1);
    else if (under("ECC Errors") && under("Volatile")) {
      if (key == "DRAM Correctable") g.dram_correctable = number(value);
      else if (key == "DRAM Uncorrectable") g.dram_uncorrectable = number(value);
      else if (key == "SRAM Uncorrectable") g.sram_uncorrectable = number(value);
    } else if (under("Remapped Rows")) {
      if (key == "Uncorrectable Error") g.remapped_uncorrectable = number(value);
      else if (key == "Pending") g.remap_pending = value == "Yes";
      else if (key == "Remapping Failure Occurred") g.remap_failure = value == "Yes";
    } else if ((under("Clocks Event Reasons") || under("Clocks Throttle Reasons")) &&
               (key == "HW Slowdown" || key == "HW Thermal Slowdown") && value == "Active") {
      g.hw_slowdown = true;
    }
  }
  return out;
}

std::string format_nvidia_smi(const std::vector<SmiGpu>& gpus) {
  std::string out = "\n==============NVSMI LOG==============\n\n";
  out += fmt::format("{:<40}: {}\n", "Attached GPUs", gpus.size());
  auto kv = [&](int indent, const std::string& key, const std::string& value) {
    out += std::string(static_cast<std::size_t>(indent), ' ') + fmt::format("{:<{}}: {}\n", key, 40 - indent, value);
  };
  auto heading = [&](int indent, const std::string& name) { out += std::string(static_cast<std::size_t>(indent), ' ') + name + "\n"; };
  auto temp = [](double t) { return t < 0 ? std::string("N/A") : fmt::format("{:g} C", t); };
  for (const auto& g : gpus) {
    out += "GPU " + g.bus + "\n";
    kv(4, "Product Name", "NVIDIA H100 80GB HBM3");
    heading(4, "Clocks Event Reasons");
    kv(8, "HW Slowdown", g.hw_slowdown ? "Active" : "Not Active");
    kv(8, "HW Thermal Slowdown", "Not Active");
    heading(4, "ECC Errors");
    heading(8, "Volatile");
    kv(12, "SRAM Correctable", "0");
    kv(12, "SRAM Uncorrectable", fmt::format("{:g}", g.sram_uncorrectable));
    kv(12, "DRAM Correctable", fmt::format("{:g}", g.dram_correctable));
    kv(12, "DRAM Uncorrectable", fmt::format("{:g}", g.dram_uncorrectable));
    heading(8, "Aggregate");
    kv(12, "SRAM Correctable", "0");
    kv(12, "SRAM Uncorrectable", "0");
    kv(12, "DRAM Correctable", "0");
    kv(12, "DRAM Uncorrectable", "0");
    heading(4, "Retired Pages");
    kv(8, "Single Bit ECC", "N/A");
    kv(8, "Double Bit ECC", "N/A");
    kv(8, "Pending Page Blacklist", "N/A");
    heading(4, "Remapped Rows");
    kv(8, "Correctable Error", "0");
    kv(8, "Uncorrectable Error", fmt::format("{:g}", g.remapped_uncorrectable));
    kv(8, "Pending", g.remap_pending ? "Yes" : "No");
    kv(8, "Remapping Failure Occurred", g.remap_failure ? "Yes" : "No");
    heading(4, "Temperature");
    kv(8, "GPU Current Temp", temp(g.gpu_temp));
    kv(8, "GPU Shutdown Temp", "92 C");
    kv(8, "Memory Current Temp", temp(g.memory_temp));
  }
  return out;
}

NodeView events_from_smi(const std::vector<SmiGpu>& gpus, const RawCodes& codes) {
  NodeView v;
  auto add = [&](const std::string& raw, int gpu, double value) { add_event(v, codes, raw, gpu, 0.0, value); };
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const SmiGpu& g = gpus[i];
    const int gpu = static_cast<int>(i);
    if (g.gpu_temp > 70) add("DCGM_150", gpu, g.gpu_temp - 70);
    if (g.memory_temp > 75) add("DCGM_140", gpu, g.memory_temp - 75);
    if (g.dram_correctable > 0) add("DCGM_310", gpu, g.dram_correctable);
    if (g.dram_uncorrectable > 0) add("XID_48", gpu, g.dram_uncorrectable);
    if (g.sram_uncorrectable > 0) add("SMI_SRAM_UE", gpu, g.sram_uncorrectable);
    if (g.remapped_uncorrectable > 0) add("DCGM_393", gpu, g.remapped_uncorrectable);
    if (g.remap_pending) add("XID_63", gpu, 0);
    if (g.remap_failure) add("XID_64", gpu, 0);
    if (g.hw_slowdown) add("SMI_HW_SLOWDOWN", gpu, 0);
  }
  return v;
}

// ---------------------------------------------------------------- HAL telemetry

NodeView events_from_telemetry(const nexp::Telemetry& before, const nexp::Telemetry& after, const ProbeResult& probe,
                               const FleetSpec& fleet, int platform, int slot) {
  NodeView v;
  auto get = [](const nexp::Telemetry& t, const char* key) {
    auto it = t.values.find(key);
    return it == t.values.end() ? std::nan("") : it->second;
  };
  auto delta = [&](const char* key) {
    const double a = get(before, key), b = get(after, key);
    return std::isnan(a) || std::isnan(b) ? 0.0 : b - a;
  };
  const auto& codes = fleet.platforms[static_cast<std::size_t>(platform)].codes;
  auto add = [&](const char* kind_name, double value) {
    const int kind = fleet.kind_index(kind_name);
    if (kind != kNoIndex && !codes[static_cast<std::size_t>(kind)].raw.empty()) v.events.push_back({kind, slot, 0.0, value});
  };
  const double temp = get(after, "temperature_c");
  if (temp > 70) add("temp_high", temp - 70);
  if (get(after, "throttled") > 0) add("throttle", 0);
  const double sbe = delta("ecc_sbe_total");
  if (sbe > 0) add("ecc_sbe", sbe);
  if (sbe > 1000) add("ecc_sbe_storm", sbe);
  const double dbe = delta("ecc_dbe_total");
  if (dbe > 0) add("ecc_dbe", dbe);
  if (delta("retired_pages") > 0) add("retired_pages", delta("retired_pages"));
  if (delta("pcie_replay_total") > 0) add("pcie_replay", delta("pcie_replay_total"));
  if (get(after, "link_up") == 0 || get(before, "link_up") == 0) add("dev_link_error", 0);
  if (delta("link_errors_total") > 0) add("dev_link_crc", delta("link_errors_total"));
  if (probe.timed_out) add("device_hang", 0);
  else if (probe.expected_seconds_per_step > 0 && probe.seconds_per_step > 3 * probe.expected_seconds_per_step) add("straggler", 0);
  if (probe.wrong_answer) add("nan_loss", 0);
  return v;
}

void merge_into(NodeView& into, const NodeView& from) {
  into.events.insert(into.events.end(), from.events.begin(), from.events.end());
  std::stable_sort(into.events.begin(), into.events.end(), [](const Event& a, const Event& b) { return a.minutes < b.minutes; });
}

}  // namespace drwatson
