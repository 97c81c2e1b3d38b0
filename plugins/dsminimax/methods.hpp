#pragma once
// The nexp side: data sets (an NC-PL instance on a graph), the single-run methods and the kappa study.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nexp/nexp.hpp>

#include "algorithms.hpp"
#include "graph.hpp"
#include "problems.hpp"

namespace dsminimax {

enum class Topology { Ring, ErdosRenyi };

struct NcplOptions {
  int nodes = 8;
  Topology topology = Topology::Ring;
  double edge_probability = 0.4;
  double kappa = 10;
  std::int64_t instance = 0;
  int dim_x = 10, dim_y = 20, rank = 15;
  double lam = 0.5, a = 1.0, coupling = 1.0, heterogeneity = 0.5, noise = 0.0;
  Coupling coupling_mode = Coupling::Aligned;
  static void declare(nexp::Options<NcplOptions>& o);
};

// A problem on a graph: what every method of the plugin runs on.
class Instance : public nexp::Dataset {
 public:
  Instance(std::shared_ptr<const Problem> problem, Mixing mixing)
      : problem(std::move(problem)), mixing(std::move(mixing)) {}
  std::string describe() const override;
  std::shared_ptr<const Problem> problem;
  Mixing mixing;
};

Mixing make_mixing(Topology topology, int nodes, double p, std::uint64_t instance);
std::shared_ptr<nexp::Dataset> make_ncpl(const NcplOptions& o, nexp::RunContext& ctx);

enum class Split { Iid, LabelSkewed };
enum class Source { A9a, Mnist38, Libsvm, Csv };

struct LogregOptions {
  Source source = Source::A9a;  // a9a: <data>/stable_fairness/adult/a9a.txt; mnist_3_8: <data>/mnist
  std::string file;             // libsvm, csv: the file
  std::string label = "label";  // csv: the label column (> 0: +1, else -1); the other columns are features
  int features = 123;
  std::int64_t samples = 2000;  // training rows used (a random subset; 0: all)
  int nodes = 8;
  Topology topology = Topology::Ring;
  double edge_probability = 0.4;
  Split split = Split::Iid;
  std::int64_t batch = 0;       // 0: full local gradients
  double rho = 1;               // weight of the dual regulariser rho/2 ||y - 1/n||^2
  std::int64_t instance = 0;
  static void declare(nexp::Options<LogregOptions>& o);
};
std::shared_ptr<nexp::Dataset> make_logreg(const LogregOptions& o, nexp::RunContext& ctx);
// A LIBSVM file of binary labels (+1/-1 or 1/0): rows, features (1-based indices < `features`).
LogregData read_libsvm(const std::filesystem::path& file, int features);
// MNIST's training digits 3 (+1) and 8 (-1), pixels / 255, from the IDX files in `dir`.
LogregData read_mnist_3_8(const std::filesystem::path& dir);
// A CSV table: the `label` column (> 0: +1, else -1) and every other column a numeric feature.
LogregData read_csv_logreg(const std::filesystem::path& file, const std::string& label);

enum class AuxMode { Local, Mixed };
enum class Backend { Sim, Comm };

// Options of every single-run method (ds_gda, gt_gda, dm_hsgd, dream, dm_gda: one struct, so `method=` can switch).
struct RunOptions {
  std::int64_t steps = 20000;   // the cap
  double eps = 1e-2;
  bool stop_at_eps = true;
  double step_scale = 1.0;      // multiplies the rule's step sizes (and DS-GDA's beta, mu)
  std::optional<double> eta;    // overrides eta_y (ds_gda: eta_x = eta_y = eta)
  double ratio = 0;             // the two-timescale methods: eta_y / eta_x; 0: the theory rule's kappa^2
  std::optional<double> r1, r2, beta, mu;
  double hybrid = 0.1;          // dm_hsgd's and dm_gda's b
  int refresh = 20;             // dream: exact local gradients every `refresh` iterations
  double momentum = 0.5;        // dm_gda's theta
  AuxMode aux = AuxMode::Local;
  Backend backend = Backend::Sim;
  std::int64_t log_every = 0;   // 0: steps / 200
  static void declare(nexp::Options<RunOptions>& o);
};

std::vector<std::string> run_metrics();
// The single-run methods (dsminimax.ds_gda, ...) are in plugin.cpp: they pick the back end, and the
// comm one links LibTorch.

// Result of one run to eps.
struct Trace {
  std::int64_t iterations_to_eps = -1;  // first t with ||grad Phi(xbar)||^2 + consensus <= eps^2; -1: never
  double grad_phi_norm = 0, phi = 0, consensus = 0;
  std::int64_t grad_calls = 0, rounds = 0;
  bool diverged = false;
};
StepSizes steps_for(Algorithm a, const RunOptions& o, const Problem& p, double gap);
// Runs on `net` (any back end); `log` (may be empty) sees every log_every-th iteration. Every rank of a
// comm run takes the same decisions: its metrics are sums over all ranks.
Trace run_to_eps(const Problem& p, Network& net, Algorithm a, const StepSizes& s, const RunOptions& o,
                 std::uint64_t seed, const std::function<void(std::int64_t, const Trace&)>& log = {});
// The same on the sim back end.
Trace run_to_eps(const Problem& p, const Mixing& w, Algorithm a, const StepSizes& s, const RunOptions& o,
                 std::uint64_t seed, const std::function<void(std::int64_t, const Trace&)>& log = {});

// ---- The kappa study (dsminimax.kappa_scaling)
struct ScalingOptions {
  std::vector<double> kappas = {10, 30, 100, 300, 1000};
  std::int64_t instances = 5;
  std::vector<std::string> methods = {"ds_gda", "gt_gda"};
  std::vector<double> step_grid = {0.5, 1, 2};  // multiples of each rule's step sizes
  std::vector<double> ratio_grid = {1, 10, 100, 1000, 10000};
  std::int64_t cap = 2000000;
  double eps = 1e-2;
  int nodes = 8;
  static void declare(nexp::Options<ScalingOptions>& o);
};
void run_kappa_scaling(nexp::RunContext& ctx);

// ---- The comparison on one data set (dsminimax.compare): every method on one grid of step multiples,
// over seeds; each method at its best grid value (least mean final ||grad Phi(xbar)||).
struct CompareOptions {
  std::vector<std::string> methods = {"ds_gda", "gt_gda", "dm_hsgd", "dream", "dm_gda"};
  std::vector<double> step_grid = {0.25, 0.5, 1, 2, 4};  // multiples of each rule's step sizes
  std::int64_t seeds = 5;
  std::int64_t steps = 2000;       // gossip rounds per run
  double target = 0.5;             // reported: the round from which ||grad Phi(xbar)|| stays <= target
  std::int64_t log_every = 20;     // curve points (curves.csv)
  RunOptions run;                  // the methods' own options (ratio, hybrid, refresh, momentum, ...)
  static void declare(nexp::Options<CompareOptions>& o);
};
void run_compare(nexp::RunContext& ctx);

}  // namespace dsminimax
