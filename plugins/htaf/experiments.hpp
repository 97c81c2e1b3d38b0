#pragma once
// htaf's methods:
//   htaf.dhn      deep Heaviside MLP, depth x activation x mode: accuracy, trained, gradient ratio
//   htaf.snn      LIF MLP (BPTT through the surrogate): accuracy, firing rate
//   htaf.bnn      binary-weight, sign-unit MLP: accuracy
//   htaf.icbm     CNN -> m step units -> linear head: hard / soft accuracy, gap, binary share, concept AUC
//   htaf.profile  gradient mass and tails of every activation (no training)
#include <nexp/nexp.hpp>

#include <cstdint>
#include <vector>

#include "activations.hpp"

namespace htaf {

// The activation of a model and its mode (shared by every training method).
struct UnitOptions {
  Kind activation = Kind::Htaf;
  Mode mode = Mode::Surrogate;
  double a = 4.0, b = 1.0, alpha = 2.0, beta = 10.0, width = 1.0;
  static void declare(nexp::Options<UnitOptions>& o);
  Activation activation_spec() const;
};

// Adam on mini-batches.
struct FitOptions {
  std::int64_t epochs = 2, batch_size = 128, eval_batch = 1000, log_every = 100;
  double lr = 1e-3;
  static void declare(nexp::Options<FitOptions>& o);
};

struct DhnOptions : UnitOptions, FitOptions {
  std::int64_t depth = 3, width = 256;
  static void declare(nexp::Options<DhnOptions>& o);
};

struct SnnOptions : UnitOptions, FitOptions {
  std::int64_t hidden = 256, steps = 6;
  double leak = 0.9, threshold = 1.0;
  static void declare(nexp::Options<SnnOptions>& o);
};

struct BnnOptions : UnitOptions, FitOptions {
  std::vector<std::int64_t> hidden = {512, 512};
  static void declare(nexp::Options<BnnOptions>& o);
};

struct IcbmOptions : UnitOptions, FitOptions {
  std::int64_t units = 64, probe_size = 2000;
  static void declare(nexp::Options<IcbmOptions>& o);
};

struct ProfileOptions {
  double a = 4.0, b = 1.0, alpha = 2.0, beta = 10.0, width = 1.0;
  static void declare(nexp::Options<ProfileOptions>& o);
};

void run_dhn(nexp::RunContext& ctx);
void run_snn(nexp::RunContext& ctx);
void run_bnn(nexp::RunContext& ctx);
void run_icbm(nexp::RunContext& ctx);
void run_profile(nexp::RunContext& ctx);

// Share of values within `tol` of 0 or 1.
double binary_share(const std::vector<double>& values, double tol = 0.05);
// Mean over concepts of the best unit's AUC (max(AUC, 1 - AUC): a unit may encode a concept's absence);
// units [N, m], concepts [N, K] in {0, 1}.
double concept_auc(const std::vector<std::vector<double>>& units, const std::vector<std::vector<int>>& concepts);

}  // namespace htaf
