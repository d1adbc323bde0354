#include "nnergy/learn/training_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "nnergy/core/error.h"
#include "nnergy/core/setting_name.h"

namespace nnergy::learn {

namespace {

bool finite_positive(const std::optional<double>& value) {
  return value.has_value() && std::isfinite(*value) && *value > 0;
}

// The catalog device `dataset_name` (the name the driver reported when the dataset was
// measured) refers to, by DeviceCatalog::find's rules (ids, aliases, catalog names and driver
// names such as "NVIDIA H100 80GB HBM3"), or null when none does.
const device::DeviceSpec* match_by_name(const device::DeviceCatalog& catalog,
                                        const std::string& dataset_name) {
  if (dataset_name.empty()) return nullptr;
  try {
    return &catalog.find(dataset_name);
  } catch (const InvalidInput&) {
    return nullptr;
  }
}

DeviceResolution resolve_device(const device::DeviceCatalog& catalog,
                                const dataset::DeviceRecord& record,
                                const std::optional<std::string>& device_id,
                                const std::string& db_path, SettingNames names) {
  DeviceResolution r;
  r.dataset_name = record.name;
  r.dataset_kind = record.kind;
  if (device_id) {
    r.catalog_id = catalog.find(*device_id).id;
    r.how = setting_with_value(names, "device", *device_id);
    return r;
  }
  if (const device::DeviceSpec* d = match_by_name(catalog, record.name)) {
    r.catalog_id = d->id;
    r.how = "catalog device with the dataset device's name";
    return r;
  }
  const bool has_cpu_core =
      std::any_of(catalog.devices().begin(), catalog.devices().end(),
                  [](const device::DeviceSpec& d) { return d.id == kCpuCoreDeviceId; });
  if (record.kind == "cpu" && has_cpu_core) {
    // One core, because the CPU datasets are measured with one LibTorch thread (see
    // data/devices.md, entry cpu-core).
    r.catalog_id = kCpuCoreDeviceId;
    r.how = "CPU not in the catalog: one estimated x86-64 core";
    return r;
  }
  throw InvalidInput(fmt::format(
      "{}: dataset device '{}' (kind {}) is not in the device catalog; pass {} with the "
      "catalog device it is (see `nnergy devices`)",
      db_path, record.name, record.kind, setting_with_value(names, "device", "ID")));
}

}  // namespace

std::string to_string(Target target) { return target == Target::kTime ? "time_s" : "power_w"; }

std::vector<std::size_t> TrainingTable::rows_with(Target target) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (target == Target::kTime || rows[i].power_w) out.push_back(i);
  }
  return out;
}

std::vector<double> TrainingTable::values(Target target,
                                          const std::vector<std::size_t>& indices) const {
  std::vector<double> out;
  out.reserve(indices.size());
  for (const std::size_t i : indices) {
    const TrainingRow& row = rows.at(i);
    if (target == Target::kTime) {
      out.push_back(row.time_s);
    } else if (row.power_w) {
      out.push_back(*row.power_w);
    } else {
      throw InternalError("training table: row " + std::to_string(i) + " has no power");
    }
  }
  return out;
}

std::vector<std::string> TrainingTable::signatures() const {
  std::set<std::string> unique;
  for (const TrainingRow& row : rows) unique.insert(row.signature);
  return {unique.begin(), unique.end()};
}

std::string fnv1a_64_file_digest(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InvalidInput(path + ": cannot read the file");
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  char buffer[1 << 16];
  while (file) {
    file.read(buffer, sizeof buffer);
    const std::streamsize got = file.gcount();
    for (std::streamsize i = 0; i < got; ++i) {
      hash ^= static_cast<unsigned char>(buffer[i]);
      hash *= 0x100000001b3ULL;
    }
  }
  if (file.bad()) throw InvalidInput(path + ": read error");
  return fmt::format("{:016x}", hash);
}

TrainingTable build_training_table(const std::string& db_path, const device::DeviceCatalog& catalog,
                                   const std::optional<std::string>& device_id,
                                   SettingNames names) {
  if (!std::filesystem::is_regular_file(db_path)) {
    throw InvalidInput(setting_with_value(names, "db", db_path) + ": no such dataset file");
  }
  const dataset::DatasetStore store =
      dataset::DatasetStore::open(db_path, dataset::OpenMode::kReadOnly);
  TrainingTable table;
  table.dataset_path = db_path;
  table.dataset_digest = fnv1a_64_file_digest(db_path);

  const std::vector<dataset::MeasurementRecord> measurements = store.measurements();
  std::set<std::int64_t> measured_devices;
  for (const dataset::MeasurementRecord& m : measurements) measured_devices.insert(m.device_id);
  if (measured_devices.empty()) {
    throw InvalidInput(fmt::format("{}: the dataset has no op measurements", db_path));
  }
  const std::vector<dataset::DeviceRecord> devices = store.devices();
  if (measured_devices.size() > 1) {
    std::vector<std::string> device_names;
    for (const dataset::DeviceRecord& d : devices) {
      if (measured_devices.count(d.id) != 0) device_names.push_back(d.name);
    }
    throw InvalidInput(fmt::format(
        "{}: op measurements of {} devices ({}); a model is trained on one device's dataset",
        db_path, measured_devices.size(), join_with_commas(device_names)));
  }
  const std::int64_t device_row = *measured_devices.begin();
  const auto record =
      std::find_if(devices.begin(), devices.end(),
                   [&](const dataset::DeviceRecord& d) { return d.id == device_row; });
  if (record == devices.end()) {
    throw InvalidInput(
        fmt::format("{}: measurements of device row {}, which is not in the "
                    "devices table",
                    db_path, device_row));
  }
  table.device_resolution = resolve_device(catalog, *record, device_id, db_path, names);
  table.device = catalog.find(table.device_resolution.catalog_id);

  std::map<std::string, graph::OpDescriptor> ops;
  for (dataset::OpRecord& stored : store.ops())
    ops.emplace(stored.op.signature, std::move(stored.op));

  std::vector<const dataset::MeasurementRecord*> kept;
  std::set<std::string> kept_signatures;
  for (const dataset::MeasurementRecord& m : measurements) {
    if (m.values.status != dataset::MeasurementStatus::kOk) {
      ++table.error_rows;
      continue;
    }
    if (!finite_positive(m.values.time_s)) {
      ++table.dropped_rows;
      continue;
    }
    if (ops.count(m.key.signature) == 0) {
      throw InvalidInput(fmt::format("{}: measurement of op '{}', which is not in the ops table",
                                     db_path, m.key.signature));
    }
    kept.push_back(&m);
    kept_signatures.insert(m.key.signature);
  }
  if (kept.empty()) {
    throw InvalidInput(fmt::format(
        "{}: no usable op measurement ({} error rows, {} without a finite positive time)", db_path,
        table.error_rows, table.dropped_rows));
  }

  std::vector<graph::OpDescriptor> measured_ops;
  for (const std::string& signature : kept_signatures) measured_ops.push_back(ops.at(signature));
  table.encoder = features::FeatureEncoder::fit(measured_ops);
  table.features = table.encoder.empty_matrix();

  for (const dataset::MeasurementRecord* m : kept) {
    const graph::OpDescriptor& op = ops.at(m->key.signature);
    features::FeatureContext context;
    context.device = &table.device;
    context.clock_mhz = static_cast<double>(m->key.clock_mhz);
    context.precision =
        device::parse_precision(m->key.dtype, fmt::format("{}: measurement of op '{}' ({}), dtype",
                                                          db_path, op.op_type, m->key.signature));
    context.mode = m->key.mode == "training" ? graph::Mode::kTraining : graph::Mode::kInference;
    table.encoder.append(table.features, op, context);

    TrainingRow row;
    row.signature = m->key.signature;
    row.op_type = op.op_type;
    row.mode = m->key.mode;
    row.clock_mhz = m->key.clock_mhz;
    row.dtype = m->key.dtype;
    row.time_s = *m->values.time_s;
    if (m->values.power_w) {
      if (finite_positive(m->values.power_w)) {
        row.power_w = m->values.power_w;
      } else {
        ++table.dropped_power;
      }
    }
    table.rows.push_back(std::move(row));
  }

  table.networks = store.networks();
  for (dataset::NetworkMeasurementRecord& n : store.network_measurements()) {
    if (n.device_id == device_row && n.values.status == dataset::MeasurementStatus::kOk &&
        finite_positive(n.values.time_s)) {
      table.network_measurements.push_back(std::move(n));
    }
  }
  return table;
}

}  // namespace nnergy::learn
