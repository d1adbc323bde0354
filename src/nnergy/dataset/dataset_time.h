#pragma once

#include <string>

namespace nnergy::dataset {

/// The current UTC time as ISO 8601 with milliseconds, e.g. "2026-11-22T01:58:02.123Z".
/// Milliseconds because merge orders measurements of one key by this time. Thread-safe.
std::string utc_now_iso8601();

}  // namespace nnergy::dataset
