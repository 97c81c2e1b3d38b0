// The run's communicator (nexp/comm.hpp): Gloo through c10d, and the one-process world.
#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>

#include "nexp/error.hpp"
#include "torch_components.hpp"

namespace nexp {

namespace {

void check_peer(int peer, int size, const char* what) {
  if (peer < 0 || peer >= size)
    throw Error(fmt::format("comm: {} rank {} is not in the world of {} rank{}", what, peer, size, size == 1 ? "" : "s"));
}

void check_graph(const Graph& graph, int size) {
  if (graph.size() != size)
    throw Error(fmt::format("comm: exchange over a graph of {} nodes in a world of {} ranks", graph.size(), size));
}

void check_each(const Graph& graph, int rank, size_t to, size_t from) {
  const size_t peers = graph.neighbours[static_cast<size_t>(rank)].size();
  if (to != peers || from != peers)
    throw Error(fmt::format("comm: exchange on rank {} with {} neighbour{}: {} tensors to send and {} to receive, "
                            "expected one of each per neighbour", rank, peers, peers == 1 ? "" : "s", to, from));
}

// One process: every collective is the identity.
class SoloComm final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backend() const override { return "none"; }
  void barrier() override {}
  bool any(bool flag) override { return flag; }
  void all_reduce(at::Tensor&, ReduceOp) override {}
  void broadcast(at::Tensor&, int root) override { check_peer(root, 1, "broadcast from"); }
  std::vector<at::Tensor> all_gather(const at::Tensor& t) override { return {t.clone()}; }
  void send(const at::Tensor&, int to, int) override {
    throw Error(fmt::format("comm: send to rank {} in a one-process run; set `distributed.processes`", to));
  }
  void recv(at::Tensor&, int from, int) override {
    throw Error(fmt::format("comm: recv from rank {} in a one-process run; set `distributed.processes`", from));
  }
  std::vector<at::Tensor> exchange(const Graph& graph, const at::Tensor&) override {
    check_graph(graph, 1);
    return {};
  }
  void exchange(const Graph& graph, const std::vector<at::Tensor>& to_each, std::vector<at::Tensor>& from_each) override {
    check_graph(graph, 1);
    check_each(graph, 0, to_each.size(), from_each.size());
  }
};

c10d::ReduceOp reduce_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Min: return c10d::ReduceOp::MIN;
    case ReduceOp::Max: return c10d::ReduceOp::MAX;
    default: return c10d::ReduceOp::SUM;  // Avg: a sum, then a division
  }
}

c10::intrusive_ptr<c10d::Store> make_store(const CommSetup& s, std::chrono::milliseconds timeout) {
  const std::string& r = s.rendezvous;
  if (r.rfind("file:", 0) == 0) {
    auto store = c10::make_intrusive<c10d::FileStore>(r.substr(5), s.size);
    store->setTimeout(timeout);
    return store;
  }
  const size_t colon = r.rfind(':');
  if (r.rfind("tcp:", 0) != 0 || colon <= 4)
    throw Error(fmt::format("comm: rendezvous '{}' is neither file:<path> nor tcp:<host>:<port>", r));
  c10d::TCPStoreOptions o;
  o.port = static_cast<std::uint16_t>(std::stoi(r.substr(colon + 1)));
  o.isServer = s.rank == 0;
  o.numWorkers = static_cast<size_t>(s.size);
  o.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(r.substr(4, colon - 4), o);
}

class GlooComm final : public Comm {
 public:
  explicit GlooComm(const CommSetup& s) : rank_(s.rank), size_(s.size) {
    const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(s.timeout_seconds * 1000));
    // Ranks start at their own pace (a loaded machine, a busy Slurm node): the rendezvous waits at least
    // kRendezvousFloor for the last one; each collective waits `timeout`.
    auto store = c10::make_intrusive<c10d::PrefixStore>("nexp", make_store(s, std::max(timeout, kRendezvousFloor)));
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(s.host));
    options->threads = 2;  // c10d's default in PyTorch
    group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank_, size_, options);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "gloo"; }

  void barrier() override { group_->barrier()->wait(); }
  bool any(bool flag) override {
    at::Tensor t = at::full({1}, flag ? 1 : 0, at::kInt);
    all_reduce(t, ReduceOp::Max);
    return t.item<int>() != 0;
  }

  void all_reduce(at::Tensor& t, ReduceOp op) override {
    on_contiguous(t, [&](at::Tensor& c) {
      std::vector<at::Tensor> v{c};
      c10d::AllreduceOptions o;
      o.reduceOp = reduce_op(op);
      group_->allreduce(v, o)->wait();
    });
    if (op == ReduceOp::Avg) t.div_(size_);
  }
  void broadcast(at::Tensor& t, int root) override {
    check_peer(root, size_, "broadcast from");
    on_contiguous(t, [&](at::Tensor& c) {
      std::vector<at::Tensor> v{c};
      c10d::BroadcastOptions o;
      o.rootRank = root;
      group_->broadcast(v, o)->wait();
    });
  }
  std::vector<at::Tensor> all_gather(const at::Tensor& t) override {
    std::vector<std::vector<at::Tensor>> out(1);
    for (int k = 0; k < size_; ++k) out[0].push_back(at::empty_like(t, at::MemoryFormat::Contiguous));
    std::vector<at::Tensor> in{t.contiguous()};
    group_->allgather(out, in)->wait();
    return out[0];
  }
  void send(const at::Tensor& t, int to, int tag) override { post_send(t, to, tag)->wait(); }
  void recv(at::Tensor& t, int from, int tag) override {
    on_contiguous(t, [&](at::Tensor& c) { post_recv(c, from, tag)->wait(); });
  }
  std::vector<at::Tensor> exchange(const Graph& graph, const at::Tensor& t) override {
    check_graph(graph, size_);
    const auto& peers = graph.neighbours[static_cast<size_t>(rank_)];
    const at::Tensor mine = t.contiguous();
    std::vector<at::Tensor> got;
    std::vector<c10::intrusive_ptr<c10d::Work>> pending;
    for (int p : peers) pending.push_back(post_send(mine, p, kExchangeTag));
    for (int p : peers) {
      got.push_back(at::empty_like(mine));
      pending.push_back(post_recv(got.back(), p, kExchangeTag));
    }
    for (auto& w : pending) w->wait();
    return got;
  }
  void exchange(const Graph& graph, const std::vector<at::Tensor>& to_each, std::vector<at::Tensor>& from_each) override {
    check_graph(graph, size_);
    check_each(graph, rank_, to_each.size(), from_each.size());
    const auto& peers = graph.neighbours[static_cast<size_t>(rank_)];
    std::vector<at::Tensor> out, in;
    std::vector<c10::intrusive_ptr<c10d::Work>> pending;
    for (size_t i = 0; i < peers.size(); ++i) {
      out.push_back(to_each[i].contiguous());
      pending.push_back(post_send(out.back(), peers[i], kExchangeTag));
    }
    for (size_t i = 0; i < peers.size(); ++i) {
      in.push_back(from_each[i].is_contiguous() ? from_each[i] : at::empty_like(from_each[i], at::MemoryFormat::Contiguous));
      pending.push_back(post_recv(in.back(), peers[i], kExchangeTag));
    }
    for (auto& w : pending) w->wait();
    for (size_t i = 0; i < peers.size(); ++i)
      if (!in[i].is_same(from_each[i])) from_each[i].copy_(in[i]);
  }

 private:
  static constexpr int kExchangeTag = 0x6e78;  // apart from the tags methods pick for send/recv
  static constexpr std::chrono::milliseconds kRendezvousFloor{120000};

  template <class F>
  static void on_contiguous(at::Tensor& t, F&& f) {
    if (t.is_contiguous()) return f(t);
    at::Tensor c = t.contiguous();
    f(c);
    t.copy_(c);
  }
  c10::intrusive_ptr<c10d::Work> post_send(const at::Tensor& t, int to, int tag) {
    check_peer(to, size_, "send to");
    std::vector<at::Tensor> v{t.contiguous()};
    return group_->send(v, to, tag);
  }
  c10::intrusive_ptr<c10d::Work> post_recv(at::Tensor& t, int from, int tag) {
    check_peer(from, size_, "recv from");
    std::vector<at::Tensor> v{t};
    return group_->recv(v, from, tag);
  }

  int rank_, size_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
};

}  // namespace

std::unique_ptr<Comm> make_torch_comm(const CommSetup& setup) {
  if (setup.size <= 1) return std::make_unique<SoloComm>();
  return std::make_unique<GlooComm>(setup);
}

}  // namespace nexp
