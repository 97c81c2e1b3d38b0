#include "world.hpp"

#include <fmt/format.h>

#include <deque>
#include <fstream>
#include <sstream>

namespace cb_pbrl {

void GridOptions::declare(nexp::Options<GridOptions>& o) {
  o.add("world", &GridOptions::world, "built-in world (ignored when `map` is given)",
        {{"hazard_band", WorldKind::HazardBand}, {"cliff", WorldKind::Cliff}, {"random", WorldKind::Random}});
  o.add("map", &GridOptions::map, "a map file: rows of S G H # . and an optional `costs:` block");
  o.add("size", &GridOptions::size, "side of a random world").range(4, 30);
  o.add("slip", &GridOptions::slip, "probability that a uniformly random action replaces the chosen one").range(0, 0.9);
  o.add("discount", &GridOptions::discount, "discount gamma").range(0.5, 0.999);
  o.add("horizon", &GridOptions::horizon, "length of the rollouts that segments are cut from").range(10, 1000);
  o.add("goal_reward", &GridOptions::goal_reward, "reward collected in the goal cell");
  o.add("step_reward", &GridOptions::step_reward, "reward of every other step");
  o.add("hazard_cost", &GridOptions::hazard_cost, "cost per visit of an H cell of a map without a costs block")
      .range(1e-6, 1e6);
  o.add("cost_low", &GridOptions::cost_low, "least hazard cost of a random world").range(1e-6, 1e6);
  o.add("cost_high", &GridOptions::cost_high, "largest hazard cost of a random world").range(1e-6, 1e6);
  o.add("hazard_density", &GridOptions::hazard_density, "share of hazard cells in a random world").range(0, 0.8);
  o.add("wall_density", &GridOptions::wall_density, "share of wall cells in a random world").range(0, 0.5);
  o.add("budget", &GridOptions::budget, "cost budget d on the discounted cost (absolute)").min(0);
  o.add("budget_fraction", &GridOptions::budget_fraction,
        "without `budget`: d = least + fraction (J_c(unconstrained optimum) - least)")
      .range(0, 1);
}

namespace {

[[noreturn]] void map_error(const std::string& origin, std::size_t line, const std::string& what) {
  throw nexp::DataError(fmt::format("{}:{}: {}; fix the map file (rows of S G H # ., then optionally `costs:` and "
                                    "one number per cell)",
                                    origin, line, what));
}

bool reachable(const MapText& map) {
  const int R = static_cast<int>(map.rows.size()), C = static_cast<int>(map.rows[0].size());
  std::vector<char> seen(static_cast<std::size_t>(R * C), 0);
  std::deque<int> queue;
  for (int i = 0; i < R * C; ++i)
    if (map.rows[i / C][i % C] == 'S') queue.push_back(i), seen[i] = 1;
  while (!queue.empty()) {
    const int i = queue.front();
    queue.pop_front();
    if (map.rows[i / C][i % C] == 'G') return true;
    const int dr[4] = {-1, 0, 1, 0}, dc[4] = {0, 1, 0, -1};
    for (int a = 0; a < 4; ++a) {
      const int r = i / C + dr[a], c = i % C + dc[a];
      if (r < 0 || r >= R || c < 0 || c >= C || map.rows[r][c] == '#' || seen[r * C + c]) continue;
      seen[r * C + c] = 1;
      queue.push_back(r * C + c);
    }
  }
  return false;
}

}  // namespace

MapText parse_map(const std::string& text, const std::string& origin) {
  MapText out;
  std::istringstream in(text);
  std::string line;
  std::size_t number = 0;
  bool in_costs = false;
  while (std::getline(in, line)) {
    ++number;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) continue;
    if (line == "costs:") {
      in_costs = true;
      continue;
    }
    if (!in_costs) {
      if (line.find_first_not_of("SGH#.") != std::string::npos)
        map_error(origin, number, fmt::format("expected only the characters S G H # ., found '{}'", line));
      if (!out.rows.empty() && line.size() != out.rows[0].size())
        map_error(origin, number, fmt::format("expected a row of {} cells, found {}", out.rows[0].size(), line.size()));
      out.rows.push_back(line);
      continue;
    }
    std::istringstream cells(line);
    std::vector<double> row;
    std::string token;
    while (cells >> token) {
      try {
        std::size_t used = 0;
        const double v = std::stod(token, &used);
        if (used != token.size() || !(v >= 0)) throw std::invalid_argument(token);
        row.push_back(v);
      } catch (const std::exception&) {
        map_error(origin, number, fmt::format("expected a cost >= 0, found '{}'", token));
      }
    }
    if (out.rows.empty() || row.size() != out.rows[0].size())
      map_error(origin, number, fmt::format("expected {} costs, found {}", out.rows.empty() ? 0 : out.rows[0].size(),
                                            row.size()));
    out.costs.push_back(row);
  }
  if (out.rows.empty()) map_error(origin, number, "expected at least one map row, found none");
  if (in_costs && out.costs.size() != out.rows.size())
    map_error(origin, number, fmt::format("expected {} rows of costs, found {}", out.rows.size(), out.costs.size()));
  int starts = 0, goals = 0;
  for (const auto& row : out.rows)
    for (char ch : row) starts += ch == 'S', goals += ch == 'G';
  if (starts != 1 || goals != 1)
    map_error(origin, number, fmt::format("expected one S and one G, found {} S and {} G", starts, goals));
  if (!reachable(out)) map_error(origin, number, "expected a path from S to G around the walls, found none");
  return out;
}

MapText builtin_map(WorldKind kind) {
  if (kind == WorldKind::HazardBand)
    return parse_map("S..HH..G\n...HH...\n...HH...\n...HH...\n...HH...\n........\n........\n........\n", "hazard_band");
  std::string text = "............\n............\n.HHHHHHHHHH.\nSHHHHHHHHHHG\ncosts:\n";
  const std::string zero = "0 0 0 0 0 0 0 0 0 0 0 0\n";
  text += zero + zero + "0 .5 .5 .5 .5 .5 .5 .5 .5 .5 .5 0\n0 2 2 2 2 2 2 2 2 2 2 0\n";
  return parse_map(text, "cliff");
}

MapText random_map(const GridOptions& o, nexp::Random& rng) {
  const int n = o.size;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    MapText map;
    map.rows.assign(static_cast<std::size_t>(n), std::string(static_cast<std::size_t>(n), '.'));
    map.costs.assign(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(n), 0.0));
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) {
        const double u = rng.uniform();
        if (u < o.wall_density) {
          map.rows[r][c] = '#';
        } else if (u < o.wall_density + o.hazard_density) {
          map.rows[r][c] = 'H';
          map.costs[r][c] = rng.uniform(o.cost_low, o.cost_high);
        }
      }
    map.rows[n - 1][0] = 'S', map.costs[n - 1][0] = 0;
    map.rows[0][n - 1] = 'G', map.costs[0][n - 1] = 0;
    if (reachable(map)) return map;
  }
  throw nexp::ConfigError(fmt::format("dataset: no random {}x{} map with wall_density {} connects S to G in 1000 "
                                      "draws; lower wall_density",
                                      n, n, o.wall_density));
}

Grid build_grid(const MapText& map, const GridOptions& o, const std::string& name) {
  Grid g;
  g.name = name;
  g.rows = static_cast<int>(map.rows.size());
  g.cols = static_cast<int>(map.rows[0].size());
  g.horizon = o.horizon;
  const int cells = g.rows * g.cols, S = cells + 1, A = 4;
  for (const auto& row : map.rows) g.cells.insert(g.cells.end(), row.begin(), row.end());
  Cmdp& m = g.m;
  m.S = S, m.A = A, m.gamma = o.discount;
  m.r = VectorXd::Zero(S), m.c = VectorXd::Zero(S), m.mu0 = VectorXd::Zero(S);
  m.P.assign(static_cast<std::size_t>(S * A), {});
  const int dr[4] = {-1, 0, 1, 0}, dc[4] = {0, 1, 0, -1};
  auto move = [&](int s, int a) {
    const int r = s / g.cols + dr[a], c = s % g.cols + dc[a];
    if (r < 0 || r >= g.rows || c < 0 || c >= g.cols || g.cells[r * g.cols + c] == '#') return s;
    return r * g.cols + c;
  };
  for (int s = 0; s < cells; ++s) {
    const char ch = g.cells[s];
    if (ch == 'S') m.mu0(s) = 1.0;
    if (ch != '#') m.r(s) = ch == 'G' ? o.goal_reward : o.step_reward;
    if (!map.costs.empty()) m.c(s) = map.costs[s / g.cols][s % g.cols];
    else if (ch == 'H') m.c(s) = o.hazard_cost;
    for (int a = 0; a < A; ++a) {
      auto& row = m.P[static_cast<std::size_t>(s * A + a)];
      if (ch == 'G') {
        row.push_back({cells, 1.0});
        continue;
      }
      std::vector<double> p(static_cast<std::size_t>(S), 0.0);
      for (int b = 0; b < A; ++b) p[move(s, b)] += o.slip / A + (a == b ? 1.0 - o.slip : 0.0);
      for (int t = 0; t < S; ++t)
        if (p[t] > 0) row.push_back({t, p[t]});
    }
  }
  for (int a = 0; a < A; ++a) m.P[static_cast<std::size_t>(cells * A + a)].push_back({cells, 1.0});
  m.validate();
  return g;
}

double uniform_return(const Cmdp& m) { return PolicyEval(m, MatrixXd::Constant(m.S, m.A, 1.0 / m.A)).value(m.r); }

void attach_budget_and_expert(Grid& g, const GridOptions& o) {
  const Cmdp& m = g.m;
  g.least_cost = least_cost(m);
  const MatrixXd pi_unc = soft_policy(solve_soft_q(m, m.r, 0.0, 1e-12), 0.0);
  g.unconstrained_cost = PolicyEval(m, pi_unc).value(m.c);
  g.budget = o.budget ? *o.budget : g.least_cost + o.budget_fraction * (g.unconstrained_cost - g.least_cost);
  if (g.budget < g.least_cost - 1e-9)
    throw nexp::ConfigError(fmt::format("dataset.budget = {} is below the least achievable discounted cost {:.6g} of "
                                        "world {}: no policy can meet it; choose budget >= {:.6g}",
                                        g.budget, g.least_cost, g.name, g.least_cost));
  g.expert = solve_occupancy_lp(m, std::max(g.budget, g.least_cost));
  g.expert_lam = solve_dual_bisection(m, g.budget).lam;
  g.random_return = uniform_return(m);
}

std::vector<int> Grid::hazard_labels() const {
  std::vector<int> out;
  for (int s = 0; s < rows * cols; ++s)
    if (cells[s] != '#') out.push_back(m.c(s) > 0 ? 1 : 0);
  return out;
}

std::string Grid::describe() const {
  return fmt::format("cb_pbrl.grid {}: {}x{}, budget d = {:.4g} (least {:.4g}, unconstrained optimum {:.4g}), "
                     "expert J_r {:.4g} J_c {:.4g} lam_E {:.4g}",
                     name, rows, cols, budget, least_cost, unconstrained_cost, expert.Jr, expert.Jc, expert_lam);
}

namespace {

std::shared_ptr<Grid> make(const GridOptions& o, std::uint64_t seed) {
  MapText map;
  std::string name;
  if (o.map) {
    std::ifstream in(*o.map);
    if (!in)
      throw nexp::DataError(fmt::format("dataset.map: cannot read '{}'; expected a map file (rows of S G H # .)",
                                        *o.map));
    std::stringstream text;
    text << in.rdbuf();
    map = parse_map(text.str(), *o.map);
    name = *o.map;
  } else if (o.world == WorldKind::Random) {
    auto rng = nexp::Random::stream(seed, "map");
    map = random_map(o, rng);
    name = fmt::format("random{}", o.size);
  } else {
    map = builtin_map(o.world);
    name = o.world == WorldKind::HazardBand ? "hazard_band" : "cliff";
  }
  if (o.cost_low > o.cost_high)
    throw nexp::ConfigError(fmt::format("dataset: cost_low = {} exceeds cost_high = {}", o.cost_low, o.cost_high));
  auto g = std::make_shared<Grid>(build_grid(map, o, name));
  attach_budget_and_expert(*g, o);
  return g;
}

}  // namespace

std::shared_ptr<Grid> make_grid_for_seed(const GridOptions& o, std::uint64_t seed) { return make(o, seed); }

}  // namespace cb_pbrl
