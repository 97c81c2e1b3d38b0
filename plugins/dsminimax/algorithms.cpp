#include "algorithms.hpp"

#include <algorithm>
#include <cmath>

namespace dsminimax {

// ---------------------------------------------------------------- sim back end

void SimNetwork::mix(const Matrix& in, Matrix& out) {
  out.resize(in.rows(), in.cols());
  combine([&](int j) { return in.row(j); }, out);
  ++rounds_;
  for (int k = 0; k < mixing_.nodes; ++k)
    floats_sent_ += static_cast<std::int64_t>(mixing_.neighbours[k].size()) * in.cols();
}

// ---------------------------------------------------------------- parameter rules

StepSizes ds_gda_rule(double L, double mu, double gap) {
  const double kappa = L / mu;
  StepSizes s;
  s.r1 = s.r2 = 2 * L;
  s.eta_x = s.eta_y = gap / (L + s.r1);
  s.mu = 0.5 * s.eta_y * s.r2;
  s.beta = s.mu / std::sqrt(kappa);
  return s;
}

StepSizes gt_gda_rule(double L, double mu, double gap, double ratio) {
  const double kappa = L / mu;
  StepSizes s;
  s.eta_y = gap / L;
  s.eta_x = s.eta_y / (ratio > 0 ? ratio : std::max(1.0, kappa * kappa / (24.0 * 24.0)));
  return s;
}

// ---------------------------------------------------------------- the decentralized iteration

Decentralized::Decentralized(const Problem& p, Network& net, Algorithm algorithm, const StepSizes& steps,
                             std::uint64_t seed, const Vector& x0)
    : p_(p), net_(net), algorithm_(algorithm), s_(steps) {
  const int n = net.local(), dx = p.dim_x(), dy = p.dim_y();
  for (int i = 0; i < n; ++i) rng_.push_back(nexp::Random::stream(seed, "node", static_cast<std::uint64_t>(net.first() + i)));
  x_ = x0.transpose().replicate(n, 1);
  y_ = p.initial_y().transpose().replicate(n, 1);
  z_ = x_;
  v_ = y_;
  dx_.resize(n, dx);
  dy_.resize(n, dy);
  Vector gx, gy;
  for (int i = 0; i < n; ++i) {
    const int k = net.first() + i;
    const Sample xi = p.draw(k, rng_[i]);
    p.gradient(k, x_.row(i).transpose(), y_.row(i).transpose(), p.stochastic() ? &xi : nullptr, gx, gy);
    dx_.row(i) = gx.transpose();
    dy_.row(i) = gy.transpose();
  }
  grad_calls_ = n;
  sx_ = dx_;
  sy_ = dy_;
}

void Decentralized::estimate(const Matrix& x_new, const Matrix& y_new) {
  const bool hybrid = (algorithm_ == Algorithm::DmHsgd || algorithm_ == Algorithm::DmGda) && s_.hybrid < 1;
  const bool dream = algorithm_ == Algorithm::Dream && p_.stochastic();
  const bool refresh = dream && (t_ + 1) % std::max(1, s_.refresh) == 0;
  Vector gx, gy, hx, hy;
  for (int i = 0; i < net_.local(); ++i) {
    const int k = net_.first() + i;
    const Sample xi = p_.draw(k, rng_[i]);
    const Sample* sample = p_.stochastic() && !refresh ? &xi : nullptr;
    p_.gradient(k, x_new.row(i).transpose(), y_new.row(i).transpose(), sample, gx, gy);
    grad_calls_ += refresh ? p_.exact_gradient_cost(k) : 1;
    if (hybrid || (dream && !refresh)) {  // hybrid: d+ = g(x+; xi) + (1 - b)(d - g(x; xi)); DREAM: b = 0
      const double keep = dream ? 1.0 : 1 - s_.hybrid;
      p_.gradient(k, x_.row(i).transpose(), y_.row(i).transpose(), sample, hx, hy);
      ++grad_calls_;
      gx += keep * (dx_.row(i).transpose() - hx);
      gy += keep * (dy_.row(i).transpose() - hy);
    }
    sx_.row(i) += gx.transpose() - dx_.row(i);
    sy_.row(i) += gy.transpose() - dy_.row(i);
    dx_.row(i) = gx.transpose();
    dy_.row(i) = gy.transpose();
  }
}

void Decentralized::step() {
  const Eigen::Index dx = x_.cols(), dy = y_.cols(), n = x_.rows();
  const bool aux = algorithm_ == Algorithm::DsGda && s_.aux_mixed;
  pack_.resize(n, 2 * (dx + dy) + (aux ? dx + dy : 0));
  pack_.leftCols(2 * (dx + dy)) << x_, y_, sx_, sy_;
  if (aux) pack_.rightCols(dx + dy) << z_, v_;
  net_.mix(pack_, mixed_);
  Matrix x_new = mixed_.leftCols(dx) - s_.eta_x * (sx_ + s_.r1 * (x_ - z_));
  Matrix y_new = mixed_.middleCols(dx, dy) + s_.eta_y * (sy_ - s_.r2 * (y_ - v_));
  Vector row;
  for (Eigen::Index i = 0; i < n; ++i) {
    row = y_new.row(i).transpose();
    p_.project_y(row);
    y_new.row(i) = row.transpose();
  }
  if (algorithm_ == Algorithm::DmGda && s_.momentum < 1) {  // x+ = x + theta (x~ - x), likewise y
    x_new = x_ + s_.momentum * (x_new - x_);
    y_new = y_ + s_.momentum * (y_new - y_);
  }
  if (algorithm_ == Algorithm::DsGda) {
    if (aux) {
      z_ = mixed_.middleCols(2 * (dx + dy), dx);
      v_ = mixed_.rightCols(dy);
    }
    z_ += s_.beta * (x_new - z_);
    v_ += s_.mu * (y_new - v_);
  }
  // Trackers: s+ = W s + d+ - d (estimate() adds d+ - d to the mixed trackers).
  sx_ = mixed_.middleCols(dx + dy, dx);
  sy_ = mixed_.middleCols(2 * dx + dy, dy);
  estimate(x_new, y_new);
  x_ = std::move(x_new);
  y_ = std::move(y_new);
  ++t_;
}

Decentralized::Average Decentralized::average() {
  const Matrix& all = net_.gather(x_);  // node order: every back end sums alike, to the last bit
  Average a{Vector::Zero(all.cols()), 0};
  for (Eigen::Index k = 0; k < all.rows(); ++k) a.mean += all.row(k).transpose();
  a.mean /= net_.nodes();
  for (Eigen::Index k = 0; k < all.rows(); ++k) a.consensus += (all.row(k).transpose() - a.mean).squaredNorm();
  a.consensus /= net_.nodes();
  return a;
}

// ---------------------------------------------------------------- centralized DS-GDA (Zheng et al. 2023)

void central_ds_gda_step(const Problem& p, const StepSizes& s, CentralState& st) {
  Vector gx = Vector::Zero(p.dim_x()), gy = Vector::Zero(p.dim_y()), hx, hy;
  for (int k = 0; k < p.nodes(); ++k) {
    p.gradient(k, st.x, st.y, nullptr, hx, hy);
    gx += hx / p.nodes();
    gy += hy / p.nodes();
  }
  // x <- x - c grad_x F, y <- Proj(y + alpha grad_y F), z <- z + beta (x - z), v <- v + mu (y - v)
  const Vector x = st.x - s.eta_x * (gx + s.r1 * (st.x - st.z));
  Vector y = st.y + s.eta_y * (gy - s.r2 * (st.y - st.v));
  p.project_y(y);
  st.z += s.beta * (x - st.z);
  st.v += s.mu * (y - st.v);
  st.x = x;
  st.y = y;
}

}  // namespace dsminimax
