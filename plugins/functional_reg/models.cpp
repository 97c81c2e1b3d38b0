#include "models.hpp"

#include <fmt/format.h>
#include <nexp/linalg.hpp>

#include <cmath>

namespace functional_reg {

namespace {

Matrix coefficients(const std::vector<Curve>& curves, const BSplineBasis& basis, const Matrix& r, double lambda,
                    const std::string& predictor, const std::vector<std::string>& ids, const char* part) {
  Matrix c(static_cast<Eigen::Index>(curves.size()), basis.size());
  for (std::size_t i = 0; i < curves.size(); ++i)
    c.row(static_cast<Eigen::Index>(i)) =
        fit_curve(basis, r, lambda, curves[i].t, curves[i].x,
                  fmt::format("'{}' (predictor '{}', {} set)", ids[i], predictor, part))
            .transpose();
  return c;
}

Matrix pace_scores(const Pace& f, const std::vector<Curve>& curves, Eigen::Index k) {
  Matrix s(static_cast<Eigen::Index>(curves.size()), k);
  for (std::size_t i = 0; i < curves.size(); ++i) s.row(static_cast<Eigen::Index>(i)) = f.scores(curves[i], k).transpose();
  return s;
}

Vector to_vector(const std::vector<double>& v) { return Eigen::Map<const Vector>(v.data(), static_cast<Eigen::Index>(v.size())); }

void set_responses(Design& d, const Problem& p) {
  d.y_train = to_vector(p.train.y), d.y_validation = to_vector(p.validation.y), d.y_test = to_vector(p.test.y);
  d.predictors = p.predictors;
}

}  // namespace

Design coefficient_design(const Problem& p, const BasisOptions& o) {
  const BSplineBasis basis(static_cast<int>(o.M));
  const Matrix r = basis.roughness(), g = basis.gram();
  Design d;
  set_responses(d, p);
  const auto P = static_cast<Eigen::Index>(p.predictors.size());
  const Eigen::Index k = o.representation == Representation::BSpline ? o.M
                        : o.representation == Representation::Fpca  ? std::min<Eigen::Index>(o.components, o.M)
                                                                    : o.components;
  d.per_predictor = k;
  d.train.resize(static_cast<Eigen::Index>(p.train.size()), P * k);
  d.validation.resize(static_cast<Eigen::Index>(p.validation.size()), P * k);
  d.test.resize(static_cast<Eigen::Index>(p.test.size()), P * k);
  for (Eigen::Index q = 0; q < P; ++q) {
    const auto& name = p.predictors[static_cast<std::size_t>(q)];
    if (o.representation == Representation::Pace) {
      const Pace f = fit_pace(p.train.curves[q], static_cast<int>(k));
      d.train.middleCols(q * k, k) = pace_scores(f, p.train.curves[q], k);
      d.validation.middleCols(q * k, k) = pace_scores(f, p.validation.curves[q], k);
      d.test.middleCols(q * k, k) = pace_scores(f, p.test.curves[q], k);
      continue;
    }
    Matrix ct = coefficients(p.train.curves[q], basis, r, o.penalty, name, p.train.ids, "training");
    Matrix cv = coefficients(p.validation.curves[q], basis, r, o.penalty, name, p.validation.ids, "validation");
    Matrix cs = coefficients(p.test.curves[q], basis, r, o.penalty, name, p.test.ids, "test");
    if (o.representation == Representation::Fpca) {
      const Fpca f = fit_fpca(ct, g, static_cast<int>(k));
      ct = f.scores(ct, g), cv = f.scores(cv, g), cs = f.scores(cs, g);
    }
    d.train.middleCols(q * k, k) = ct, d.validation.middleCols(q * k, k) = cv, d.test.middleCols(q * k, k) = cs;
  }
  return d;
}

Design raw_design(const Problem& p, const std::string& method) {
  if (!p.regular)
    throw nexp::ConfigError(fmt::format(
        "{} takes the raw values on one common grid, and these curves are observed on irregular grids (each curve "
        "has its own points: dataset.irregular_points > 0 or a simulated / irregular data set). Use a "
        "coefficient-based method (functional_reg.equal_width, .bottleneck, .funcnn, .flm, .fpcr) instead",
        method));
  Design d;
  set_responses(d, p);
  const std::size_t grid = p.train.curves[0][0].t.size();
  d.per_predictor = static_cast<std::int64_t>(grid);
  auto fill = [&](const Sample& s, Matrix& x) {
    x.resize(static_cast<Eigen::Index>(s.size()), static_cast<Eigen::Index>(grid * p.predictors.size()));
    for (std::size_t q = 0; q < p.predictors.size(); ++q)
      for (std::size_t i = 0; i < s.size(); ++i)
        for (std::size_t j = 0; j < grid; ++j)
          x(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(q * grid + j)) = s.curves[q][i].x[j];
  };
  fill(p.train, d.train), fill(p.validation, d.validation), fill(p.test, d.test);
  return d;
}

LinearFit fit_flm(const Matrix& c, const Vector& y, const Matrix& gram, const Matrix& roughness, std::int64_t predictors,
                  std::vector<double> lambdas) {
  const Eigen::Index M = gram.rows(), P = predictors, n = c.rows();
  Matrix z(n, P * M), pen = Matrix::Zero(P * M, P * M);
  for (Eigen::Index q = 0; q < P; ++q) {
    z.middleCols(q * M, M) = c.middleCols(q * M, M) * gram;
    pen.block(q * M, q * M, M, M) = roughness;
  }
  const Vector zmean = z.colwise().mean().transpose();
  const double ymean = y.mean();
  const Matrix zc = z.rowwise() - zmean.transpose();
  const Vector yc = y.array() - ymean;
  const Matrix ztz = zc.transpose() * zc;
  const Vector zty = zc.transpose() * yc;
  const double scale = ztz.trace() / std::max(pen.trace(), 1e-300);
  if (lambdas.empty())
    for (int e = -12; e <= 2; ++e)
      for (double f : {1.0, 3.0}) lambdas.push_back(f * std::pow(10.0, e) * scale);
  LinearFit best;
  double best_gcv = INFINITY;
  for (double lambda : lambdas) {
    // A tiny ridge keeps the system positive definite where Z is rank-deficient (e.g. n < P M).
    const Matrix a = ztz + lambda * pen + 1e-10 * scale * Matrix::Identity(P * M, P * M);
    const nexp::linalg::Ldlt ldlt(a);
    const Vector b = ldlt.solve(zty);
    const double rss = (yc - zc * b).squaredNorm();
    const double trace = ldlt.solve(ztz).trace();
    const double denom = static_cast<double>(n) - 1.0 - trace;
    const double gcv = denom > 0 ? static_cast<double>(n) * rss / (denom * denom) : INFINITY;
    if (gcv < best_gcv) {
      best_gcv = gcv;
      best.lambda = lambda;
      best.b = b;
    }
  }
  if (!std::isfinite(best_gcv)) throw nexp::DataError("FLM: no penalty on the grid leaves residual degrees of freedom");
  // Back to the coefficient scale: predictions are c G b_p, so fold G into b.
  Vector bc(P * M);
  for (Eigen::Index q = 0; q < P; ++q) bc.segment(q * M, M) = gram * best.b.segment(q * M, M);
  best.intercept = ymean - zmean.dot(best.b);
  best.b = bc;
  return best;
}

Vector flm_beta(const LinearFit& f, const BSplineBasis& basis, std::int64_t p, const std::vector<double>& t) {
  const Eigen::Index M = basis.size();
  const Vector bg = f.b.segment(p * M, M);  // = G b_p
  const Vector b = nexp::linalg::Ldlt(basis.gram()).solve(bg);
  return basis.evaluate(t) * b;
}

LinearFit fit_ols(const Matrix& x, const Vector& y) {
  LinearFit f;
  const Vector mean = x.colwise().mean().transpose();
  const Matrix xc = x.rowwise() - mean.transpose();
  f.b = nexp::linalg::least_squares(xc, (y.array() - y.mean()).matrix());
  f.intercept = y.mean() - mean.dot(f.b);
  return f;
}

Vector LinearFit::predict(const Matrix& x) const { return (x * b).array() + intercept; }

double mean_square(const Vector& a, const Vector& b) { return (a - b).squaredNorm() / static_cast<double>(a.size()); }
double rmse(const Vector& a, const Vector& b) { return std::sqrt(mean_square(a, b)); }

}  // namespace functional_reg
