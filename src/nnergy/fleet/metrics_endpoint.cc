#include "nnergy/fleet/metrics_endpoint.h"

#include <fmt/format.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include <atomic>

#include "nnergy/core/error.h"
#include "nnergy/fleet/metric_families.h"

namespace nnergy::fleet {

namespace {

// Threads answering scrapes. civetweb gives each open connection a thread while it is open, so
// there are enough that connections held idle (a local user can open some) leave most free;
// each thread costs only its stack.
constexpr std::size_t kServerThreads = 48;
// How long a connection may take to send its request, ms: a scrape's request is one packet, so
// a connection that trickles it or sends nothing is closed after this.
constexpr int kRequestTimeoutMs = 2000;
// How long an idle kept-alive connection stays open, ms: longer than a 1 s scrape interval,
// short enough that idle connections held open give their threads back soon (Prometheus
// reconnects at once when its kept-alive connection was closed).
constexpr int kKeepAliveMs = 3000;

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
                                 const std::string& setting, const std::string& access_control_list)
    : address_(address), collector_(std::make_shared<Collector>(std::move(snapshot))) {
  check_can_listen(address, setting);
  try {
    // Keep-alive as Prometheus servers use it: a scrape every period over one connection.
    std::vector<std::string> options = {
        "listening_ports", address.civetweb_option(), "num_threads", std::to_string(kServerThreads),
        "request_timeout_ms", std::to_string(kRequestTimeoutMs), "enable_keep_alive", "yes",
        "keep_alive_timeout_ms", std::to_string(kKeepAliveMs),
        // Headers and body go out as two writes: without TCP_NODELAY, Nagle's algorithm holds the
        // body until the client's delayed ACK, 40 ms per scrape on a kept-alive connection.
        "tcp_nodelay", "1"};
    if (!access_control_list.empty()) {
      options.insert(options.end(), {"access_control_list", access_control_list});
    }
    exposer_ = std::make_unique<prometheus::Exposer>(options);
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
