// The language-model client's own cost beside the server's latency, and 16 concurrent requests.
//
//   nexp_llm_bench BASE_URL [CALLS] [CSV]      (bench/llm_client.sh starts the local server and runs it)
//
// Overhead per call, three ways, each a median over CALLS one-token calls of the same request:
//   nexp      nexp::llm::Client::chat(): build the body, HTTP with keep-alive, parse the answer
//   raw HTTP  the same body POSTed with a bare httplib client (no JSON on our side): the anchor
//   server    the server's own time for the request (its Server-Timing header)
// "nexp - server" bounds the client's overhead from above (loopback TCP and the server's HTTP
// parsing are in it); "nexp - raw" is what the client adds over a bare HTTP request.
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "nexp/llm.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[static_cast<size_t>(q * (v.size() - 1))];
}

nexp::llm::Request one_token() {
  nexp::llm::Request r;
  r.messages = {nexp::llm::Message::user("Answer with one word: what is the colour of the sky?")};
  r.max_tokens = 1;
  r.temperature = 0;
  return r;
}

double server_ms(const httplib::Result& res) {
  const std::string v = res->get_header_value("Server-Timing");
  const auto at = v.find("dur=");
  return at == std::string::npos ? -1 : std::atof(v.c_str() + at + 4);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: nexp_llm_bench BASE_URL [CALLS] [CSV]\n";
    return 2;
  }
  const std::string base = argv[1];
  const int calls = argc > 2 ? std::atoi(argv[2]) : 100;
  nexp::llm::Endpoint e;
  e.name = "local", e.base_url = base, e.model = "nexp-tiny-random.gguf", e.max_concurrency = 16, e.timeout_s = 120;
  nexp::llm::Client client(e);
  const nexp::llm::Request req = one_token();
  for (int i = 0; i < 5; ++i) client.chat(req);  // warm: connection, server caches

  // ---- one call at a time: nexp, raw HTTP and the server's own time, interleaved
  const std::string origin = base.substr(0, base.find('/', base.find("://") + 3));
  const std::string path = base.substr(origin.size()) + "/chat/completions";
  const std::string body = nexp::llm::Client::request_body(e, req, 1, std::nullopt);
  httplib::Client raw(origin);
  raw.set_keep_alive(true);
  raw.set_tcp_nodelay(true);
  std::vector<double> nexp_ms, nexp_server_ms, raw_ms, raw_server_ms;
  for (int i = 0; i < calls; ++i) {
    const nexp::llm::Response a = client.chat(req);
    nexp_ms.push_back(a.latency_s * 1e3);
    nexp_server_ms.push_back(a.server_s * 1e3);
    const auto t0 = Clock::now();
    auto res = raw.Post(path.c_str(), body, "application/json");
    raw_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!res || res->status != 200) {
      std::cerr << "raw request failed\n";
      return 1;
    }
    raw_server_ms.push_back(server_ms(res));
  }
  std::vector<double> over_server, over_raw;
  for (int i = 0; i < calls; ++i) over_server.push_back(nexp_ms[i] - nexp_server_ms[i]);
  for (int i = 0; i < calls; ++i) over_raw.push_back((nexp_ms[i] - nexp_server_ms[i]) - (raw_ms[i] - raw_server_ms[i]));

  // ---- 16 concurrent requests, 4 rounds
  std::atomic<int> ok{0}, failed{0};
  const auto c0 = Clock::now();
  for (int round = 0; round < 4; ++round) {
    std::vector<std::thread> threads;
    for (int i = 0; i < 16; ++i)
      threads.emplace_back([&, i] {
        nexp::llm::Request r = one_token();
        r.max_tokens = 8, r.temperature = 1, r.seed = round * 16 + i;
        try {
          client.chat(r);
          ++ok;
        } catch (const std::exception& ex) {
          ++failed;
          std::cerr << ex.what() << "\n";
        }
      });
    for (auto& t : threads) t.join();
  }
  const double conc_s = std::chrono::duration<double>(Clock::now() - c0).count();

  std::printf("%-34s %10s %10s\n", "one-token call, ms", "median", "p90");
  std::printf("%-34s %10.3f %10.3f\n", "nexp client, wall", median(nexp_ms), quantile(nexp_ms, 0.9));
  std::printf("%-34s %10.3f %10.3f\n", "raw HTTP (httplib), wall", median(raw_ms), quantile(raw_ms, 0.9));
  std::printf("%-34s %10.3f %10.3f\n", "server's own time", median(nexp_server_ms), quantile(nexp_server_ms, 0.9));
  std::printf("%-34s %10.3f %10.3f\n", "nexp - server (overhead bound)", median(over_server), quantile(over_server, 0.9));
  std::printf("%-34s %10.3f %10.3f\n", "nexp - raw HTTP (client's share)", median(over_raw), quantile(over_raw, 0.9));
  std::printf("16 concurrent x 4 rounds: %d ok, %d failed, %.2f s (%.1f requests/s)\n", ok.load(), failed.load(),
              conc_s, ok.load() / conc_s);
  if (argc > 3) {
    std::ofstream csv(argv[3]);
    csv << "measure,median_ms,p90_ms\n";
    csv << "nexp_wall," << median(nexp_ms) << "," << quantile(nexp_ms, 0.9) << "\n";
    csv << "raw_http_wall," << median(raw_ms) << "," << quantile(raw_ms, 0.9) << "\n";
    csv << "server_time," << median(nexp_server_ms) << "," << quantile(nexp_server_ms, 0.9) << "\n";
    csv << "nexp_minus_server," << median(over_server) << "," << quantile(over_server, 0.9) << "\n";
    csv << "nexp_minus_raw," << median(over_raw) << "," << quantile(over_raw, 0.9) << "\n";
    csv << "concurrent_16x4_failed," << failed.load() << ",\n";
  }
  return failed.load() == 0 ? 0 : 1;
}
