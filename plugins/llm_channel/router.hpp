#pragma once
// The cost-aware semantic-nearest-neighbour router and the quality-cost frontier measures.
//
// Router (paper, "cost-aware semantic-kNN router"): a table Q[j, t], C[j, t] of mean quality and
// normalised cost of arm t on training task j. For a query x, the k training tasks with the largest
// cosine similarity s_j = cos(e_x, e_j) give
//     Qhat_t = sum_j w_j Q[j, t] / sum_j w_j,   Chat_t = sum_j w_j C[j, t] / sum_j w_j,
//     w_j = max(s_j, 0) (similarity weighting) or 1 (uniform),
// and the router answers with argmax_t Qhat_t - lam Chat_t (ties: the cheaper arm). The one
// Lagrangian knob lam traces the frontier without retraining.
//
// Frontier measures over tasks (a "policy" is a fixed arm, or the router at one lam; its point is
// its mean quality and mean cost over the test tasks):
//   - the strongest fixed technique b*: the fixed arm of highest mean quality;
//   - cost_cut_at_matched_quality = 1 - C_R / C_b*, C_R the least cost of a router point whose quality
//     is at least Q_b* - tol (tol: `tolerance_se` standard errors of Q_b* over tasks); NaN if none;
//   - quality_gain_at_matched_cost = R(C_b*) / Q_b* - 1, R(c) the best router quality at cost <= c;
//   - quality_gain_vs_single_shot = R(C_b*) / Q_s - 1, Q_s the best single-shot arm's quality;
//   - frontier_covered: the share of Pareto-optimal fixed arms t with R(C_t) >= Q_t - tol_t;
//   - mean_gain_over_frontier: over the router's points (one per lam), the mean of Q_R / F(C_R) - 1,
//     F(c) the best fixed quality at cost <= c (points cheaper than every fixed arm are left out).
#include <cstddef>
#include <vector>

namespace llm_channel {

// Row-major tasks x arms.
struct ArmTable {
  std::size_t tasks = 0, arms = 0;
  std::vector<double> quality, cost;
  ArmTable() = default;
  ArmTable(std::size_t t, std::size_t a) : tasks(t), arms(a), quality(t * a, 0.0), cost(t * a, 0.0) {}
  double& q(std::size_t task, std::size_t arm) { return quality[task * arms + arm]; }
  double& c(std::size_t task, std::size_t arm) { return cost[task * arms + arm]; }
  double q(std::size_t task, std::size_t arm) const { return quality[task * arms + arm]; }
  double c(std::size_t task, std::size_t arm) const { return cost[task * arms + arm]; }
};

double cosine(const std::vector<double>& a, const std::vector<double>& b);

struct ArmEstimate {
  std::vector<double> quality, cost;  // Qhat_t, Chat_t
};

// The estimate for a query from the training tasks `train` (rows of `table`) with their embeddings.
// k >= train.size() uses every training task.
ArmEstimate knn_estimate(const ArmTable& table, const std::vector<std::size_t>& train,
                         const std::vector<std::vector<double>>& embeddings, const std::vector<double>& query,
                         std::size_t k, bool similarity_weights);

// argmax_t Qhat_t - lam Chat_t, ties to the cheaper arm, then the lower index.
std::size_t choose_arm(const ArmEstimate& e, double lam);

struct Point {
  double quality = 0, cost = 0, quality_se = 0;
};

struct FrontierMeasures {
  double cost_cut_at_matched_quality = 0, quality_gain_at_matched_cost = 0, quality_gain_vs_single_shot = 0;
  double frontier_covered = 0;
  double mean_gain_over_frontier = 0;
  std::size_t strongest_arm = 0;
};

// Indices of the Pareto-optimal points (no other point at least as good in both and better in one).
std::vector<std::size_t> pareto_front(const std::vector<Point>& points);
// The best quality among `points` with cost <= c (-inf when none).
double best_quality_within(const std::vector<Point>& points, double cost);

FrontierMeasures frontier_measures(const std::vector<Point>& fixed, const std::vector<Point>& router,
                                   const std::vector<std::size_t>& single_shot_arms, double tolerance_se);

}  // namespace llm_channel
