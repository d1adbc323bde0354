#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nnergy/fleet/listen_address.h"
#include "nnergy/fleet/live_readings.h"

namespace prometheus {
class Exposer;
}

namespace nnergy::fleet {

/// An HTTP server (prometheus-cpp's civetweb Exposer) answering GET /metrics with the Prometheus
/// text exposition of metric_families() over the readings `snapshot` returns at each scrape,
/// plus prometheus-cpp's own exposer_* metrics (scrape count, bytes, request latency). Scrapes
/// are served by a pool of worker threads while the object lives; `snapshot` must be
/// thread-safe. Any local user can connect to it (an address on this machine), so it is made to
/// stay scrapeable when connections are held open idle or trickle their request: enough
/// workers that a few held connections leave the rest free, a short request timeout and a
/// short keep-alive after which a held connection is closed, and an optional allow list that
/// refuses other clients before they take a worker.
class MetricsEndpoint {
 public:
  using Snapshot = std::function<std::vector<SourceReading>()>;

  /// Listens at `address` (check_can_listen first, for a clear message). Throws InvalidInput
  /// naming `setting` when it cannot listen there.
  /// `access_control_list`: access_control_list()'s form, "" for everyone.
  MetricsEndpoint(const ListenAddress& address, Snapshot snapshot, const std::string& setting,
                  const std::string& access_control_list = "");
  ~MetricsEndpoint();  ///< stops serving
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  /// The port it listens on (the kernel's choice for port 0).
  std::uint16_t port() const { return port_; }
  /// "http://HOST:PORT/metrics".
  std::string url() const;
  /// Scrapes answered so far.
  std::uint64_t scrapes() const;

 private:
  struct Collector;
  ListenAddress address_;
  std::uint16_t port_ = 0;
  std::shared_ptr<Collector> collector_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace nnergy::fleet
