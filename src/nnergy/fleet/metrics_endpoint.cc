#include "nnergy/fleet/metrics_endpoint.h"

#include <fmt/format.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include <atomic>

#include "nnergy/core/error.h"
#include "nnergy/fleet/metric_families.h"

namespace nnergy::fleet {

namespace {

// Threads answering scrapes; a kept-alive connection holds one while it stays open, so there
// are enough for a few Prometheus servers plus ad-hoc readers.
constexpr std::size_t kServerThreads = 8;
// How long an idle kept-alive connection stays open, ms: longer than a 1 s scrape interval.
constexpr int kKeepAliveMs = 5000;

}  // namespace

struct MetricsEndpoint::Collector : prometheus::Collectable {
  explicit Collector(Snapshot s) : snapshot(std::move(s)) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    scrapes.fetch_add(1, std::memory_order_relaxed);
    return metric_families(snapshot());
  }
  Snapshot snapshot;
  mutable std::atomic<std::uint64_t> scrapes{0};
};

MetricsEndpoint::MetricsEndpoint(const ListenAddress& address, Snapshot snapshot,
                                 const std::string& setting)
    : address_(address), collector_(std::make_shared<Collector>(std::move(snapshot))) {
  check_can_listen(address, setting);
  try {
    // Keep-alive as Prometheus servers use it: a scrape every period over one connection.
    exposer_ = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports", address.civetweb_option(), "num_threads", std::to_string(kServerThreads),
        "enable_keep_alive", "yes", "keep_alive_timeout_ms", std::to_string(kKeepAliveMs),
        // Headers and body go out as two writes: without TCP_NODELAY, Nagle's algorithm holds the
        // body until the client's delayed ACK, 40 ms per scrape on a kept-alive connection.
        "tcp_nodelay", "1"});
  } catch (const std::exception& e) {
    throw InvalidInput(fmt::format("{} {}: cannot listen there ({}); choose another address",
                                   setting, address.civetweb_option(), e.what()));
  }
  const std::vector<int> ports = exposer_->GetListeningPorts();
  port_ = ports.empty() ? address.port : static_cast<std::uint16_t>(ports.front());
  exposer_->RegisterCollectable(collector_);
}

MetricsEndpoint::~MetricsEndpoint() = default;

std::string MetricsEndpoint::url() const {
  return fmt::format("http://{}/metrics", address_.authority(port_));
}

std::uint64_t MetricsEndpoint::scrapes() const {
  return collector_->scrapes.load(std::memory_order_relaxed);
}

}  // namespace nnergy::fleet
