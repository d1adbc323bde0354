#include "nnergy/fleet/metrics_endpoint.h"

#include <fmt/format.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include <atomic>

#include "nnergy/core/error.h"
#include "nnergy/fleet/metric_families.h"

namespace nnergy::fleet {

namespace {

// Threads answering scrapes: one Prometheus server plus a few ad-hoc readers.
constexpr std::size_t kServerThreads = 4;

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
    exposer_ = std::make_unique<prometheus::Exposer>(address.civetweb_option(), kServerThreads);
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
