#include "nnergy/measure/rapl_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <set>
#include <system_error>
#include <utility>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/core/text.h"
#include "nnergy/measure/source_factories.h"

namespace nnergy::measure {

namespace fs = std::filesystem;

namespace {

constexpr const char* kDefaultPowercapRoot = "/sys/class/powercap";
constexpr const char* kZonePrefix = "intel-rapl:";

// powercap reports energy in µJ; this is the one place it becomes J.
double microjoules_to_joules(std::uint64_t energy_uj) {
  return static_cast<double>(energy_uj) * 1e-6;
}

// The contents of a small sysfs file, or the errno of the failed open/read. POSIX calls rather
// than iostreams because the caller needs errno to tell "permission denied" from other failures.
struct FileText {
  std::string text;
  int error_number = 0;
};

FileText read_small_file(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {"", errno};
  FileText result;
  char buffer[256];
  // sysfs attributes are a few bytes; the bound only guards against a wrong path to a big file.
  while (result.text.size() < 4096) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      result.error_number = errno;
      break;
    }
    if (n == 0) break;
    result.text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (result.error_number != 0) result.text.clear();
  return result;
}

std::optional<std::uint64_t> parse_unsigned(const std::string& text) {
  const std::string_view t = trim(text);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return value;
}

// An unsigned µJ value from a powercap file, or why it could not be had.
struct CounterRead {
  std::optional<std::uint64_t> value_uj;
  std::string error;
};

CounterRead read_counter_file(const fs::path& file) {
  const FileText f = read_small_file(file);
  if (f.error_number != 0)
    return {std::nullopt, describe_powercap_read_error(file, f.error_number)};
  const std::optional<std::uint64_t> value = parse_unsigned(f.text);
  if (!value) {
    return {std::nullopt, file.string() + ": expected an unsigned integer in µJ, found '" +
                              std::string(trim(f.text)) + "'"};
  }
  return {value, ""};
}

// A zone directory: intel-rapl:N (a package or psys) or intel-rapl:N:M (one of its subzones).
struct Zone {
  fs::path dir;
  std::string dir_name;
  std::uint64_t top = 0;
  std::optional<std::uint64_t> sub;
  std::string zone_name;  // contents of the zone's `name` file
};

// Parses "intel-rapl:N" / "intel-rapl:N:M". Other powercap entries are skipped on purpose:
// "intel-rapl" is the control type, and "intel-rapl-mmio:N" exposes the same package counter a
// second time on some Intel client CPUs, so reading it too would count the package twice.
std::optional<Zone> parse_zone_name(const std::string& dir_name) {
  auto number = [](const std::string& text) -> std::optional<std::uint64_t> {
    const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
    return digits ? parse_unsigned(text) : std::nullopt;
  };
  if (dir_name.rfind(kZonePrefix, 0) != 0) return std::nullopt;
  const std::string rest = dir_name.substr(std::string(kZonePrefix).size());
  const auto colon = rest.find(':');
  const std::optional<std::uint64_t> top = number(rest.substr(0, colon));
  if (!top) return std::nullopt;
  Zone zone;
  zone.dir_name = dir_name;
  zone.top = *top;
  if (colon != std::string::npos) {
    zone.sub = number(rest.substr(colon + 1));
    if (!zone.sub) return std::nullopt;
  }
  return zone;
}

// Zones under `root`, packages before their subzones. Subzones appear both as entries of the
// root (symlinks in /sys/class/powercap) and as directories inside their package; either is
// enough.
std::vector<Zone> find_zones(const fs::path& root) {
  std::vector<Zone> zones;
  std::set<std::string> seen;
  auto scan = [&](const fs::path& dir) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::optional<Zone> zone = parse_zone_name(it->path().filename().string());
      if (!zone || !it->is_directory(ec) || !seen.insert(zone->dir_name).second) continue;
      zone->dir = it->path();
      zones.push_back(std::move(*zone));
    }
  };
  scan(root);
  const std::size_t top_level = zones.size();
  for (std::size_t i = 0; i < top_level; ++i) {
    if (!zones[i].sub) scan(zones[i].dir);
  }
  for (Zone& zone : zones) {
    const FileText name = read_small_file(zone.dir / "name");
    zone.zone_name = std::string(trim(name.text));
    if (zone.zone_name.empty()) zone.zone_name = zone.dir_name;
  }
  std::sort(zones.begin(), zones.end(), [](const Zone& a, const Zone& b) {
    if (a.top != b.top) return a.top < b.top;
    if (a.sub.has_value() != b.sub.has_value()) return !a.sub.has_value();
    return a.sub.value_or(0) < b.sub.value_or(0);
  });
  return zones;
}

std::string zone_kind(const std::string& zone_name) {
  if (zone_name.rfind("package", 0) == 0) return "cpu-package";
  if (zone_name == "core") return "cpu-core";
  return zone_name;  // "dram", "uncore", "psys": the kernel's names are already descriptive
}

// Source descriptions for `zones`, with ids unique in the run.
std::vector<SourceInfo> describe_zones(const std::vector<Zone>& zones) {
  std::vector<SourceInfo> infos;
  std::set<std::string> ids;
  for (const Zone& zone : zones) {
    std::string name = zone.zone_name;
    if (zone.sub) {
      std::string parent = std::string(kZonePrefix) + std::to_string(zone.top);
      for (const Zone& z : zones) {
        if (z.top == zone.top && !z.sub) parent = z.zone_name;
      }
      name = parent + "/" + name;
    }
    // Two zones with the same name would make ambiguous ids; the directory name disambiguates.
    if (ids.count("rapl:" + name) != 0) name += "@" + zone.dir_name;
    SourceInfo info;
    info.id = "rapl:" + name;
    info.kind = zone_kind(zone.zone_name);
    info.name = name;
    info.has_energy_counter = true;
    info.has_power = true;
    info.power_is_averaged = false;
    ids.insert(info.id);
    infos.push_back(std::move(info));
  }
  return infos;
}

}  // namespace

fs::path powercap_root() {
  const char* root = std::getenv("NNERGY_POWERCAP_ROOT");
  return root != nullptr && *root != '\0' ? fs::path(root) : fs::path(kDefaultPowercapRoot);
}

std::string describe_powercap_read_error(const fs::path& file, int error_number) {
  if (error_number == EACCES || error_number == EPERM) {
    return "permission denied reading " + file.string() + " (root-only since Linux 5.10)";
  }
  return "cannot read " + file.string() + ": " + std::generic_category().message(error_number);
}

Detection open_rapl_sources_at(const fs::path& root, const std::string& argument) {
  Detection detection;
  const std::vector<Zone> zones = find_zones(root);
  if (zones.empty()) {
    detection.unavailable.push_back(
        {"rapl", "no " + (root / "intel-rapl").string() +
                     " zones (not an Intel/AMD RAPL CPU or not exposed)"});
    return detection;
  }
  const std::vector<SourceInfo> infos = describe_zones(zones);
  std::vector<std::size_t> selected;
  for (std::size_t i = 0; i < zones.size(); ++i) {
    if (argument.empty() || argument == infos[i].name || argument == zones[i].dir_name) {
      selected.push_back(i);
    }
  }
  if (selected.empty()) {
    std::vector<std::string> names;
    for (const SourceInfo& info : infos) names.push_back(info.name);
    throw InvalidInput("no RAPL zone '" + argument + "' under " + root.string() +
                       "; accepted: " + join_with_commas(names));
  }
  for (std::size_t i : selected) {
    const CounterRead range = read_counter_file(zones[i].dir / "max_energy_range_uj");
    if (!range.value_uj) {
      detection.unavailable.push_back({"rapl", range.error});
      continue;
    }
    if (*range.value_uj == 0) {
      detection.unavailable.push_back(
          {"rapl", (zones[i].dir / "max_energy_range_uj").string() +
                       ": expected a positive counter range in µJ, found 0"});
      continue;
    }
    // Read the counter once now so that a root-only energy_uj is reported as unavailable here
    // rather than failing the first sample.
    const CounterRead energy = read_counter_file(zones[i].dir / "energy_uj");
    if (!energy.value_uj) {
      detection.unavailable.push_back({"rapl", energy.error});
      continue;
    }
    detection.sources.push_back(
        std::make_unique<RaplSource>(zones[i].dir, infos[i], *range.value_uj));
  }
  return detection;
}

Detection open_rapl_sources(const std::string& argument) {
  return open_rapl_sources_at(powercap_root(), argument);
}

RaplSource::RaplSource(fs::path zone_dir, SourceInfo info, std::uint64_t max_energy_range_uj)
    : energy_file_(std::move(zone_dir) / "energy_uj"),
      info_(std::move(info)),
      range_uj_(max_energy_range_uj) {}

PowerSample RaplSource::read(double time_s) {
  const CounterRead counter = read_counter_file(energy_file_);
  if (!counter.value_uj) throw DeviceError(info_.id + ": " + counter.error);
  const std::uint64_t now_uj = *counter.value_uj;
  PowerSample sample;
  sample.time_s = time_s;
  if (!previous_uj_) {
    unwrapped_uj_ = now_uj;
  } else {
    // energy_uj counts up to max_energy_range_uj and then restarts at 0, so its period is
    // range + 1 µJ and a counter that went down wrapped once: delta = now − prev + (range + 1).
    // (The hardware period is range + one energy unit, ~15–61 µJ; the +1 µJ convention is off by
    // less than that per wrap.) Two wraps between reads cannot be told from one, so reads must be
    // closer together than range / peak power — minutes for real zones.
    // Unsigned arithmetic keeps this exact even for range = 2^64 − 1.
    const std::uint64_t previous = *previous_uj_;
    const std::uint64_t delta_uj =
        now_uj >= previous ? now_uj - previous : now_uj + (range_uj_ - previous) + 1;
    unwrapped_uj_ += delta_uj;
    const double dt_s = time_s - previous_time_s_;
    if (dt_s > 0) sample.power_w = microjoules_to_joules(delta_uj) / dt_s;
  }
  previous_uj_ = now_uj;
  previous_time_s_ = time_s;
  sample.energy_j = microjoules_to_joules(unwrapped_uj_);
  return sample;
}

}  // namespace nnergy::measure
