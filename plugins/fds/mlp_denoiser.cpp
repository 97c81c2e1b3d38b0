#include "mlp_denoiser.hpp"

#include <fmt/format.h>
#include <nexp/binary_file.hpp>
#include <nexp/error.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace fds {

namespace {

constexpr double kPMean = -1.2, kPStd = 1.2;  // EDM's log-normal training distribution of sigma

double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

// Cosine decay from lr to lr / 10 over the run.
double learning_rate(const MlpTraining& t, int step) {
  const double progress = t.steps > 1 ? static_cast<double>(step) / (t.steps - 1) : 1.0;
  return t.lr * (0.1 + 0.45 * (1 + std::cos(kPi * progress)));
}

void check_training(const MlpTraining& t, const Mat& data) {
  if (t.width < 1 || t.depth < 1 || t.steps < 1 || t.batch < 1 || !(t.lr > 0))
    throw std::invalid_argument("mlp training: width, depth, steps, batch must be >= 1 and lr > 0");
  if (data.rows() < 2) throw std::invalid_argument("mlp training: fewer than 2 training samples");
}

Mat batch_rows(const Mat& data, int batch, nexp::Random& rng) {
  Mat y(batch, data.cols());
  for (int i = 0; i < batch; ++i) y.row(i) = data.row(static_cast<Eigen::Index>(rng.below(static_cast<std::uint64_t>(data.rows()))));
  return y;
}

}  // namespace

// ------------------------------------------------------------------ Mlp

Mlp::Mlp(int in, int emb, int width, int depth, int out, nexp::Random& rng) {
  std::vector<int> sizes{in + emb};
  for (int l = 0; l < depth; ++l) sizes.push_back(width);
  sizes.push_back(out);
  set_layout(std::move(sizes), emb);
  for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) {
    const double sd = std::sqrt((l + 2 < sizes_.size() ? 2.0 : 1.0) / sizes_[l]);  // He for SiLU layers
    for (Eigen::Index i = 0; i < sizes_[l] * sizes_[l + 1]; ++i) theta(offset_[l] + i) = sd * rng.normal();
  }
}

void Mlp::set_layout(std::vector<int> sizes, int emb) {
  sizes_ = std::move(sizes), emb_ = emb, offset_.clear();
  Eigen::Index n = 0;
  for (std::size_t l = 0; l + 1 < sizes_.size(); ++l) offset_.push_back(n), n += (sizes_[l] + 1) * sizes_[l + 1];
  theta = Eigen::VectorXd::Zero(n);
}

void Mlp::write(nexp::BinaryWriter& w) const {
  w.u64(sizes_.size());
  for (int s : sizes_) w.u64(static_cast<std::uint64_t>(s));
  w.u64(static_cast<std::uint64_t>(emb_));
  w.matrix(theta);
}

Mlp Mlp::read(nexp::BinaryReader& r) {
  const auto layers = r.u64();
  if (layers < 2 || layers > 64) throw nexp::DataError(fmt::format("{}: corrupt network ({} layer widths)", r.file().string(), layers));
  std::vector<int> sizes;
  for (std::uint64_t l = 0; l < layers; ++l) {
    const auto s = r.u64();
    if (s < 1 || s > 1u << 20) throw nexp::DataError(fmt::format("{}: corrupt network (a layer of {} units)", r.file().string(), s));
    sizes.push_back(static_cast<int>(s));
  }
  const auto emb = r.u64();
  if (emb != 0 && emb != static_cast<std::uint64_t>(kEmbedding))
    throw nexp::DataError(fmt::format("{}: corrupt network (embedding of {} inputs)", r.file().string(), emb));
  Mlp net;
  net.set_layout(std::move(sizes), static_cast<int>(emb));
  const auto expected = net.theta.size();
  r.matrix(net.theta);
  if (net.theta.size() != expected || net.theta.cols() != 1)
    throw nexp::DataError(fmt::format("{}: corrupt network ({} parameters for layers that hold {})", r.file().string(),
                                      net.theta.size(), expected));
  return net;
}

Mat Mlp::input(const Mat& x, const Eigen::VectorXd& c) const {
  if (emb_ == 0) return x;
  Mat h(x.rows(), x.cols() + emb_);
  h.leftCols(x.cols()) = x;
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    h(i, x.cols()) = c(i);
    for (int k = 0; k < (emb_ - 1) / 2; ++k) {
      const double f = std::pow(2.0, 5.0 * k / 7.0);  // 1 .. 32
      h(i, x.cols() + 1 + 2 * k) = std::cos(f * c(i));
      h(i, x.cols() + 2 + 2 * k) = std::sin(f * c(i));
    }
  }
  return h;
}

Mat Mlp::forward(const Mat& x, const Eigen::VectorXd& c, Cache* cache) const {
  const std::size_t layers = sizes_.size() - 1;
  Mat h = input(x, c);
  if (cache) cache->pre.assign(layers, Mat()), cache->act.assign(layers + 1, Mat()), cache->act[0] = h;
  for (std::size_t l = 0; l < layers; ++l) {
    const Eigen::Map<const Eigen::MatrixXd> w(theta.data() + offset_[l], sizes_[l], sizes_[l + 1]);
    const Eigen::Map<const Eigen::RowVectorXd> b(theta.data() + offset_[l] + sizes_[l] * sizes_[l + 1], sizes_[l + 1]);
    Mat z = h * w;
    z.rowwise() += b;
    if (l + 1 < layers) {
      h = z.unaryExpr([](double v) { return v * sigmoid(v); });
    } else {
      h = z;
    }
    if (cache) cache->pre[l] = std::move(z), cache->act[l + 1] = h;
  }
  return h;
}

Eigen::VectorXd Mlp::backward(const Cache& cache, const Mat& dout) const {
  const std::size_t layers = sizes_.size() - 1;
  Eigen::VectorXd grad = Eigen::VectorXd::Zero(theta.size());
  Mat g = dout;  // dL/dZ_l
  for (std::size_t l = layers; l-- > 0;) {
    if (l + 1 < layers) {
      const Mat& z = cache.pre[l];
      g = g.cwiseProduct(z.unaryExpr([](double v) {
        const double s = sigmoid(v);
        return s * (1 + v * (1 - s));
      }));
    }
    Eigen::Map<Eigen::MatrixXd> gw(grad.data() + offset_[l], sizes_[l], sizes_[l + 1]);
    Eigen::Map<Eigen::RowVectorXd> gb(grad.data() + offset_[l] + sizes_[l] * sizes_[l + 1], sizes_[l + 1]);
    gw.noalias() = cache.act[l].transpose() * g;
    gb = g.colwise().sum();
    if (l > 0) {
      const Eigen::Map<const Eigen::MatrixXd> w(theta.data() + offset_[l], sizes_[l], sizes_[l + 1]);
      Mat prev = g * w.transpose();
      g = std::move(prev);
    }
  }
  return grad;
}

Mat Mlp::features(const Mat& x) const {
  Cache c;
  forward(x, Eigen::VectorXd::Zero(x.rows()), &c);
  return c.act[c.act.size() - 2];
}

void Adam::step(Eigen::VectorXd& theta, const Eigen::VectorXd& grad, double lr) {
  constexpr double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  ++t_;
  m_ = b1 * m_ + (1 - b1) * grad;
  v_ = b2 * v_ + (1 - b2) * grad.cwiseAbs2();
  const double c1 = 1 - std::pow(b1, t_), c2 = 1 - std::pow(b2, t_);
  theta.array() -= lr * (m_.array() / c1) / ((v_.array() / c2).sqrt() + eps);
}

// ------------------------------------------------------------------ preconditioning

EdmCoefficients edm_coefficients(double sigma, double sigma_data) {
  const double s2 = sigma * sigma, d2 = sigma_data * sigma_data;
  EdmCoefficients c;
  c.c_skip = d2 / (s2 + d2);
  c.c_out = sigma * sigma_data / std::sqrt(s2 + d2);
  c.c_in = 1 / std::sqrt(s2 + d2);
  c.c_noise = std::log(sigma) / 4;
  c.weight = (s2 + d2) / (s2 * d2);
  return c;
}

VpSchedule::VpSchedule(int steps, double beta_min, double beta_max) {
  double abar = 1;
  for (int t = 0; t < steps; ++t) {
    const double beta = steps > 1 ? beta_min + (beta_max - beta_min) * t / (steps - 1) : beta_min;
    abar *= 1 - beta;
    sigma_.push_back(std::sqrt((1 - abar) / abar));
  }
}

double VpSchedule::timestep(double sigma) const {
  if (sigma <= sigma_.front()) return 0;
  if (sigma >= sigma_.back()) return static_cast<double>(sigma_.size() - 1);
  const auto i = static_cast<std::size_t>(std::upper_bound(sigma_.begin(), sigma_.end(), sigma) - sigma_.begin());
  const double lo = std::log(sigma_[i - 1]), hi = std::log(sigma_[i]);
  return static_cast<double>(i - 1) + (std::log(sigma) - lo) / (hi - lo);
}

double VpSchedule::sigma_at(double t) const {
  const double c = std::clamp(t, 0.0, static_cast<double>(sigma_.size() - 1));
  const auto i = std::min(static_cast<std::size_t>(c), sigma_.size() - 2);
  const double f = c - static_cast<double>(i);
  return std::exp((1 - f) * std::log(sigma_[i]) + f * std::log(sigma_[i + 1]));
}

void VpDenoiser::denoise(const Mat& x, double sigma, Mat& out) const {
  Mat eps;
  eps_(x / std::sqrt(1 + sigma * sigma), schedule_.timestep(sigma), eps);
  out = x - sigma * eps;
}

// ------------------------------------------------------------------ training

MlpDenoiser::MlpDenoiser(Family family, const Mat& data, const MlpTraining& t, nexp::Random& rng)
    : family_(family), training_(t), data_fingerprint_(data_fingerprint(data)) {
  check_training(t, data);
  const auto t0 = std::chrono::steady_clock::now();
  const int dim = static_cast<int>(data.cols());
  const Eigen::RowVectorXd mean = data.colwise().mean();
  sigma_data_ = std::sqrt((data.rowwise() - mean).squaredNorm() / static_cast<double>(data.size()));
  net_ = Mlp(dim, Mlp::kEmbedding, t.width, t.depth, dim, rng);
  Adam adam(net_.theta.size());
  const int tail = std::max(1, t.steps / 10);
  double tail_loss = 0;
  Eigen::VectorXd c(t.batch);
  Mat noise(t.batch, dim), in, target;
  for (int step = 0; step < t.steps; ++step) {
    const Mat y = batch_rows(data, t.batch, rng);
    for (Eigen::Index i = 0; i < noise.size(); ++i) noise.data()[i] = rng.normal();
    in.resize(t.batch, dim), target.resize(t.batch, dim);
    for (int i = 0; i < t.batch; ++i) {
      if (family_ == Family::Edm) {
        const double sigma = std::exp(kPMean + kPStd * rng.normal());
        const auto k = edm_coefficients(sigma, sigma_data_);
        const auto xn = y.row(i) + sigma * noise.row(i);
        in.row(i) = k.c_in * xn;
        target.row(i) = (y.row(i) - k.c_skip * xn) / k.c_out;  // lambda = 1 / c_out^2 folded in (EDM eq. 8)
        c(i) = k.c_noise;
      } else {
        const int ts = static_cast<int>(rng.below(static_cast<std::uint64_t>(vp_.steps())));
        const double a = vp_.alpha_bar(ts);
        in.row(i) = std::sqrt(a) * y.row(i) + std::sqrt(1 - a) * noise.row(i);
        target.row(i) = noise.row(i);
        c(i) = ts / 1000.0;
      }
    }
    Mlp::Cache cache;
    const Mat r = net_.forward(in, c, &cache) - target;
    const double loss = r.squaredNorm() / static_cast<double>(r.size());
    if (step >= t.steps - tail) tail_loss += loss;
    adam.step(net_.theta, net_.backward(cache, (2.0 / static_cast<double>(r.size())) * r), learning_rate(t, step));
  }
  final_loss_ = tail_loss / tail;
  seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void MlpDenoiser::denoise(const Mat& x, double sigma, Mat& out) const {
  if (family_ == Family::Edm) {
    const auto k = edm_coefficients(sigma, sigma_data_);
    const Eigen::VectorXd c = Eigen::VectorXd::Constant(x.rows(), k.c_noise);
    out = k.c_skip * x + k.c_out * net_.forward(k.c_in * x, c);
    return;
  }
  const VpDenoiser wrap(
      [this](const Mat& xv, double ts, Mat& eps) { eps = net_.forward(xv, Eigen::VectorXd::Constant(xv.rows(), ts / 1000.0)); },
      vp_);
  wrap.denoise(x, sigma, out);
}

// ------------------------------------------------------------------ checkpoints

namespace {
constexpr std::uint64_t kCheckpointTag = 0x01'706c6d'736466ull;  // "fdsmlp", version 1
const char* family_name(MlpDenoiser::Family f) { return f == MlpDenoiser::Family::Edm ? "mlp_edm" : "mlp_vp"; }
}  // namespace

std::uint64_t data_fingerprint(const Mat& data) {
  const std::string shape = fmt::format("{}x{}:", data.rows(), data.cols());
  const std::string_view bytes(reinterpret_cast<const char*>(data.data()), sizeof(double) * static_cast<std::size_t>(data.size()));
  return nexp::fnv1a64(shape + std::string(bytes));
}

void MlpDenoiser::save(const std::filesystem::path& file) const {
  nexp::BinaryWriter w(file, kCheckpointTag);
  w.text(family_name(family_));
  w.u64(data_fingerprint_);
  w.f64(sigma_data_), w.f64(final_loss_), w.f64(seconds_);
  for (int v : {training_.width, training_.depth, training_.steps, training_.batch}) w.u64(static_cast<std::uint64_t>(v));
  w.f64(training_.lr);
  net_.write(w);
  w.close();
}

std::unique_ptr<MlpDenoiser> MlpDenoiser::load(const std::filesystem::path& file, Family family, const Mat& data) {
  nexp::BinaryReader r(file, kCheckpointTag, "an fds denoiser checkpoint");
  const std::string found = r.text();
  if (found != family_name(family))
    throw nexp::DataError(fmt::format("{}: holds an {} denoiser, this run asks for {}; point params.load_denoisers to "
                                      "checkpoints of that family",
                                      file.string(), found, family_name(family)));
  std::unique_ptr<MlpDenoiser> d(new MlpDenoiser(family));
  d->data_fingerprint_ = r.u64();
  if (d->data_fingerprint_ != data_fingerprint(data))
    throw nexp::DataError(fmt::format(
        "{}: this {} denoiser was trained on other data than this run's ({} x {} training values; the fingerprints "
        "differ); load it only with the data set options, seed and train_samples of the run that saved it",
        file.string(), found, data.rows(), data.cols()));
  d->sigma_data_ = r.f64(), d->final_loss_ = r.f64(), d->seconds_ = r.f64();
  auto& t = d->training_;
  for (int* v : {&t.width, &t.depth, &t.steps, &t.batch}) *v = static_cast<int>(r.u64());
  t.lr = r.f64();
  d->net_ = Mlp::read(r);
  r.expect_end();
  if (d->net_.outputs() != data.cols() || d->net_.inputs() != data.cols() + Mlp::kEmbedding)
    throw nexp::DataError(fmt::format("{}: corrupt denoiser (a network from {} to {} values for {}-dimensional data)",
                                      file.string(), d->net_.inputs(), d->net_.outputs(), data.cols()));
  return d;
}

Classifier train_classifier(const Mat& x, const std::vector<int>& labels, int classes, double test_share,
                            const MlpTraining& t, nexp::Random& rng) {
  check_training(t, x);
  std::vector<Eigen::Index> order(static_cast<std::size_t>(x.rows()));
  std::iota(order.begin(), order.end(), 0);
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  const auto n_test = static_cast<std::size_t>(test_share * static_cast<double>(order.size()));
  const std::vector<Eigen::Index> test(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n_test)),
      train(order.begin() + static_cast<std::ptrdiff_t>(n_test), order.end());
  Classifier out;
  out.net = Mlp(static_cast<int>(x.cols()), 0, t.width, t.depth, classes, rng);
  Adam adam(out.net.theta.size());
  Mat xb(t.batch, x.cols());
  std::vector<int> yb(static_cast<std::size_t>(t.batch));
  const Eigen::VectorXd none = Eigen::VectorXd::Zero(t.batch);
  for (int step = 0; step < t.steps; ++step) {
    for (int i = 0; i < t.batch; ++i) {
      const Eigen::Index r = train[rng.below(train.size())];
      xb.row(i) = x.row(r), yb[static_cast<std::size_t>(i)] = labels[static_cast<std::size_t>(r)];
    }
    Mlp::Cache cache;
    Mat p = out.net.forward(xb, none, &cache);  // logits -> softmax - onehot
    for (int i = 0; i < t.batch; ++i) {
      p.row(i).array() = (p.row(i).array() - p.row(i).maxCoeff()).exp();
      p.row(i) /= p.row(i).sum();
      p(i, yb[static_cast<std::size_t>(i)]) -= 1;
    }
    adam.step(out.net.theta, out.net.backward(cache, p / t.batch), learning_rate(t, step));
  }
  auto accuracy = [&](const std::vector<Eigen::Index>& rows) {
    if (rows.empty()) return 0.0;
    Mat xs(static_cast<Eigen::Index>(rows.size()), x.cols());
    for (std::size_t i = 0; i < rows.size(); ++i) xs.row(static_cast<Eigen::Index>(i)) = x.row(rows[i]);
    const Mat logits = out.net.forward(xs, Eigen::VectorXd::Zero(xs.rows()));
    double right = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      Eigen::Index arg;
      logits.row(static_cast<Eigen::Index>(i)).maxCoeff(&arg);
      right += arg == labels[static_cast<std::size_t>(rows[i])] ? 1 : 0;
    }
    return right / static_cast<double>(rows.size());
  };
  out.train_accuracy = accuracy(train), out.test_accuracy = accuracy(test);
  return out;
}

}  // namespace fds
