#pragma once
// The dataset cb_pbrl.grid: tabular gridworld CMDPs with hazards, and the expert that labels them.
//
// Cells: S start, G goal, H hazard, # wall, . free. Actions up, right, down, left; with probability
// `slip` the action is replaced by a uniformly random one; a move into a wall or off the grid stays.
// Every step spent in a cell collects its reward (goal_reward in G, step_reward elsewhere) and its cost
// (0, or the hazard's cost); from G every action leads to an absorbing, zero-reward, zero-cost state.
// Worlds: hazard_band (8x8, the short path crosses a band of hazards, a safe detour goes round it),
// cliff (4x12: a cliff of cost 2 along the bottom row and a margin of cost 0.5 above it), random (n x n,
// walls and hazards with costs U[cost_low, cost_high], one map per seed) and map=FILE.
//
// The budget d: `budget` when given, else least + budget_fraction (J_c(unconstrained optimum) - least),
// where least = min_pi J_c(pi). A budget below `least` is refused.
// The expert: the CMDP optimum of the occupancy LP (cmdp.hpp (5)) and its multiplier lam_E (6).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nexp/dataset.hpp>
#include <nexp/error.hpp>
#include <nexp/random.hpp>

#include "cmdp.hpp"

namespace cb_pbrl {

enum class WorldKind { HazardBand, Cliff, Random };

struct GridOptions {
  WorldKind world = WorldKind::HazardBand;
  std::optional<std::string> map;
  int size = 10;
  double slip = 0.1;
  double discount = 0.95;
  int horizon = 40;
  double goal_reward = 1.0;
  double step_reward = -0.01;
  double hazard_cost = 1.0;
  double cost_low = 0.5, cost_high = 2.0;
  double hazard_density = 0.25, wall_density = 0.1;
  std::optional<double> budget;
  double budget_fraction = 0.25;
  static void declare(nexp::Options<GridOptions>& o);
};

struct Grid : nexp::Dataset {
  std::string name;
  int rows = 0, cols = 0;
  std::vector<char> cells;  // row-major; state s < rows * cols is cell s; state rows * cols is absorbing
  Cmdp m;
  int horizon = 40;
  double budget = 0, least_cost = 0, unconstrained_cost = 0;
  CmdpOptimum expert;  // the oracle at `budget`
  double expert_lam = 0;
  double random_return = 0;  // J_r of the uniform policy
  int absorbing() const { return rows * cols; }
  std::vector<int> hazard_labels() const;  // 1 for cells with cost > 0, over the grid's cells
  std::string describe() const override;
};

// The text of a map: rows of S G H # . and an optional block after a line `costs:` with one number per
// cell. `origin` names the source in errors (nexp::DataError: line, expected, found).
struct MapText {
  std::vector<std::string> rows;
  std::vector<std::vector<double>> costs;  // empty: H cells cost `hazard_cost`
};
MapText parse_map(const std::string& text, const std::string& origin);
MapText builtin_map(WorldKind kind);
MapText random_map(const GridOptions& o, nexp::Random& rng);

// The CMDP of a map (no budget, no expert).
Grid build_grid(const MapText& map, const GridOptions& o, const std::string& name);
// Budget, least cost, expert and random baseline; throws nexp::ConfigError for an infeasible budget.
void attach_budget_and_expert(Grid& g, const GridOptions& o);
// Unconstrained optimum's cost and return, the uniform policy's return.
double uniform_return(const Cmdp& m);

// The world of options `o`; a random map is drawn from `seed` (the dataset factory, make_grid in
// methods.hpp, passes the run's seed; the studies build one world per seed).
std::shared_ptr<Grid> make_grid_for_seed(const GridOptions& o, std::uint64_t seed);

}  // namespace cb_pbrl
