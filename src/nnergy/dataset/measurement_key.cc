#include "nnergy/dataset/measurement_key.h"

#include <fmt/format.h>

#include <charconv>

#include "nnergy/core/error.h"

namespace nnergy::dataset {

namespace {

std::uint64_t fnv1a(std::string_view text, std::uint64_t hash) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

bool parse_int(std::string_view text, std::int64_t& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

}  // namespace

void check_mode(std::string_view mode, std::string_view what) {
  if (mode == "inference" || mode == "training") return;
  throw InvalidInput(fmt::format("{}: mode '{}' is not one of: inference, training", what, mode));
}

Shard Shard::parse(std::string_view text, std::string_view flag) {
  const std::size_t slash = text.find('/');
  Shard shard;
  if (slash == std::string_view::npos || !parse_int(text.substr(0, slash), shard.index) ||
      !parse_int(text.substr(slash + 1), shard.count) || shard.count < 1 || shard.index < 1 ||
      shard.index > shard.count) {
    throw InvalidInput(
        fmt::format("{}: expected I/N with 1 <= I <= N (e.g. 2/4), found '{}'", flag, text));
  }
  return shard;
}

bool Shard::contains(const MeasurementKey& key) const {
  // A separator byte that cannot occur in the fields keeps ("ab","c") and ("a","bc") apart.
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  hash = fnv1a(key.signature, hash);
  hash = fnv1a(std::string_view("\x1f", 1), hash);
  hash = fnv1a(key.mode, hash);
  hash = fnv1a(std::string_view("\x1f", 1), hash);
  hash = fnv1a(std::to_string(key.clock_mhz), hash);
  hash = fnv1a(std::string_view("\x1f", 1), hash);
  hash = fnv1a(key.dtype, hash);
  return static_cast<std::int64_t>(hash % static_cast<std::uint64_t>(count)) == index - 1;
}

}  // namespace nnergy::dataset
