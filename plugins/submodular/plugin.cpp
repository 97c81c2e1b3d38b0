// submodular: neural monotone submodular set functions with pairwise interactions.
// Registers the plugin's metrics, data sets and methods with nexp.
#include <nexp/nexp.hpp>

#include "experiments.hpp"

namespace {

using nexp::Direction;

void register_components(nexp::Registrar& r) {
  r.metric("test_nrmse", Direction::Minimize, "test RMSE of F_hat against F, divided by the std of the test values");
  r.metric("violation_rate", Direction::Minimize,
           "share of random (S subset T, e) triples with F_hat(e|S) < F_hat(e|T) - tol (diminishing returns broken)");
  r.metric("monotonicity_violations", Direction::Minimize, "triples with a negative gain F_hat(e|S) or F_hat(e|T) < -tol");
  r.metric("min_ratio", Direction::Maximize, "smallest F_hat(e|S) / F_hat(e|T) over the triples (the empirical alpha)");
  r.metric("greedy_ratio", Direction::Maximize, "F(greedy_k(F_hat)) / F(greedy_k(F)), k = greedy_k (10)");
  r.metric("jaccard", Direction::Maximize, "mean Jaccard index of greedy_k(F_hat) on V and the chosen S*");
  r.metric("model_parameters", Direction::None, "learned parameters of the model");
  r.metric("target_alpha", Direction::None, "the alpha target's closed-form alpha");
  r.metric("exhaustive_violations", Direction::Minimize,
           "checks F(S+i) + F(S+j) < F(S+i+j) + F(S) - tol over every S and i, j on the first exhaustive_n items");
  r.metric("exhaustive_monotonicity_violations", Direction::Minimize, "F(S+i) < F(S) - tol on the first exhaustive_n items");
  r.metric("exhaustive_min_ratio", Direction::Maximize,
           "smallest F(e|S) / F(e|T) over every S subset T, e not in T on the first exhaustive_n items");

  r.dataset<submodular::FitDataOptions>(
      "submodular.fit", "(S, F(S)) pairs on a ground set of real items (digits, MNIST, Fashion-MNIST or a CSV file)",
      submodular::make_fit);
  r.dataset<submodular::SelectDataOptions>(
      "submodular.select", "FLEXSUBNET's subset-selection protocol on real items: (V, greedy_k of a hidden target on V)",
      submodular::make_select);

  struct Method {
    const char* name;
    const char* summary;
  };
  for (const Method& m :
       {Method{"pairwise", "the paper's network: rate-controlled concave phi of balanced pairwise terms, cross layers"},
        Method{"pairwise_alpha", "the pairwise network plus a pairwise term of closed-form alpha (alpha-submodular)"},
        Method{"dsf", "deep submodular function (Bilmes and Bai 2017): nested log1p of nonnegative sums"},
        Method{"flexsubnet", "FLEXSUBNET (De and Chakrabarti 2022): learned concave phi of modular + previous layer"},
        Method{"mixture", "mixture of submodular shells: facility location, saturated coverage, modular"},
        Method{"deepsets", "DeepSets (Zaheer et al. 2017): rho(sum phi(z)), no guarantee"},
        Method{"set_transformer", "Set Transformer (Lee et al. 2019): self-attention and pooling, no guarantee"},
        Method{"compare", "several models (params.methods) trained on the same data over several seeds, paired"}}) {
    const std::string own = m.name;
    r.method("submodular." + own, m.summary, [own](nexp::RunContext& ctx) { submodular::run(ctx, own); })
        .options<submodular::RunOptions>()
        .produces({"test_nrmse", "violation_rate", "monotonicity_violations", "greedy_ratio", "min_ratio", "jaccard",
                   "model_parameters", "seconds"})
        .accepts({"submodular.*"});
  }
  r.method("submodular.check",
           "the brute-force checker for any model: random or trained, every S and i, j on the first n <= 12 items "
           "and 10^4 random (S subset T, e) triples",
           submodular::run_check)
      .options<submodular::CheckOptions>()
      .produces({"violation_rate", "monotonicity_violations", "min_ratio", "exhaustive_violations",
                 "exhaustive_monotonicity_violations", "exhaustive_min_ratio", "model_parameters", "seconds"})
      .accepts({"submodular.*"});
}

}  // namespace

NEXP_PLUGIN(submodular, "0.1.0",
            "a concave function whose derivative decays at a controlled rate turns monotone supermodular pairwise "
            "interactions into monotone submodular (and alpha-submodular) neural set functions",
            "Neural pairwise monotone submodular functions (NeurIPS 2026; authors not named in the abstract nexp "
            "implements)",
            register_components)
