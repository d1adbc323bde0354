#include "nnergy/calibration/published_times.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "nnergy/calibration/time_calibration.h"
#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/core/text.h"
#include "nnergy/graph/zoo.h"

namespace nnergy::calibration {

namespace {

nlohmann::json read_mapping(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw InvalidInput(path.string() +
                       ": cannot be read (the mapping of published measurements "
                       "to devices and networks)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return core::parse_json_document(text.str(), path.string());
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(path.string() + ": not valid JSON: " + e.what());
  }
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::optional<device::Precision> precision_of(const std::string& text) {
  const std::string lower = ascii_lower(text);
  if (contains(lower, "tf32")) return device::Precision::kTf32;
  if (contains(lower, "fp16") || contains(lower, "amp")) return device::Precision::kFp16;
  if (contains(lower, "bf16")) return device::Precision::kBf16;
  if (contains(lower, "fp32")) return device::Precision::kFp32;
  return std::nullopt;
}

// Which passes the framework's cuDNN runs Winograd convolutions in, from "cuDNN X.Y" in its
// description; every pass when no version is named (cuDNN 5.1 is from 2016).
network::WinogradPasses winograd_passes(const std::string& framework) {
  static const std::regex kVersion(R"(cuDNN\s+(\d+)\.(\d+))");
  std::smatch match;
  if (!std::regex_search(framework, match, kVersion)) return network::WinogradPasses::kAll;
  const int major = std::stoi(match[1].str());
  const int minor = std::stoi(match[2].str());
  if (major < 5) return network::WinogradPasses::kNone;
  if (major == 5 && minor == 0) return network::WinogradPasses::kForward;
  return network::WinogradPasses::kAll;
}

// The ONNX file and dimension bindings of `network` for a record of `input_shape`.
struct NetworkMapping {
  std::filesystem::path model;
  std::map<std::string, std::int64_t> dims;
};

std::optional<NetworkMapping> network_of(const nlohmann::json& networks,
                                         const std::set<std::string>& zoo,
                                         const std::filesystem::path& data_dir,
                                         const published::PublishedMeasurement& r,
                                         std::string* why) {
  if (!networks.contains(r.network)) {
    // A zoo name: the zoo's file, its default dimensions bound by the importer.
    if (zoo.contains(r.network))
      return NetworkMapping{data_dir / "zoo" / (r.network + ".onnx"), {}};
    *why = "network not in data/calibration/networks.json nor a zoo name";
    return std::nullopt;
  }
  const nlohmann::json& n = networks.at(r.network);
  if (!n.contains("file")) {
    *why = "network left unmapped: " + n.value("unmapped", std::string("no architecture"));
    return std::nullopt;
  }
  NetworkMapping m;
  m.model = data_dir / n.at("file").get<std::string>();
  const std::string shape = r.input_shape.value_or("None");
  if (!n.contains("runs") || !n.at("runs").is_array()) return m;
  for (const nlohmann::json& run : n.at("runs")) {
    bool matches = true;
    if (run.contains("records_input_shape") && !run.at("records_input_shape").empty()) {
      const auto& shapes = run.at("records_input_shape");
      matches = std::find(shapes.begin(), shapes.end(), shape) != shapes.end();
    }
    if (!matches) continue;
    if (run.contains("dims") && run.at("dims").is_object()) {
      const nlohmann::json& dims = run.at("dims");
      for (auto it = dims.begin(); it != dims.end(); ++it) {
        m.dims[it.key()] = it.value().get<std::int64_t>();
      }
    }
    break;
  }
  return m;
}

// The mapping files, read once.
struct Mappings {
  std::filesystem::path dir;  // data/calibration, for messages
  nlohmann::json gpus;
  nlohmann::json networks;
  nlohmann::json assumed_batches;
  nlohmann::json layer_ops;   // whole file: "records" and "unmapped"
  nlohmann::json protocols;   // "sources": source key → how it timed its runs
  std::set<std::string> zoo;  // names of data/zoo/*.onnx
};

Mappings read_mappings(const std::filesystem::path& data_dir) {
  const std::filesystem::path dir = data_dir / "calibration";
  Mappings m;
  m.dir = dir;
  m.gpus = read_mapping(dir / "gpus.json").at("gpus");
  m.networks = read_mapping(dir / "networks.json").at("networks");
  m.assumed_batches = read_mapping(dir / "assumed_batches.json").at("batches");
  m.layer_ops = read_mapping(dir / "layer_ops.json");
  m.protocols = read_mapping(dir / "protocols.json").at("sources");
  for (const graph::ZooModel& model : graph::list_zoo(data_dir)) m.zoo.insert(model.name);
  return m;
}

// The run `r` measured, everything but the measured value: grade, batch (stated, or assumed in
// assumed_batches.json), framework, mode, GPU, precision and network. `part` is the quantity's
// (a training_forward/backward mode overrides it). Empty with `why` when `r` cannot be predicted.
std::optional<network::NetworkTimeMeasurement> run_of(const published::PublishedMeasurement& r,
                                                      network::TimedPart part, const Mappings& maps,
                                                      const std::filesystem::path& data_dir,
                                                      const std::vector<std::string>& grades,
                                                      std::string* why,
                                                      std::optional<std::string>* assumption) {
  auto skip = [&](const std::string& reason) {
    *why = reason;
    return std::nullopt;
  };
  network::NetworkTimeMeasurement m;
  m.part = part;
  if (std::find(grades.begin(), grades.end(), r.grade) == grades.end()) {
    return skip("grade " + r.grade + " not selected");
  }
  std::optional<std::int64_t> batch = r.batch;
  if (!batch && maps.assumed_batches.contains(r.id)) {
    const nlohmann::json& a = maps.assumed_batches.at(r.id);
    if (!a.contains("batch") || !a.at("batch").is_number_integer() ||
        a.at("batch").get<std::int64_t>() < 1) {
      throw InvalidInput((maps.dir / "assumed_batches.json").string() + ": batches." + r.id +
                         ".batch: expected a positive integer");
    }
    batch = a.at("batch").get<std::int64_t>();
    *assumption = fmt::format("batch {} assumed: {}", *batch, a.value("why", std::string()));
  }
  if (!batch) return skip("batch not stated");
  if (r.framework.find("no cuDNN") != std::string::npos) {
    // Torch7's own convolutions are 2–3× slower than cuDNN's on the same GPU: a different
    // kernel library from the cuDNN/cuBLAS kernels every framework nnergy predicts uses.
    return skip("framework '" + r.framework + "' runs convolutions without cuDNN (not modelled)");
  }
  if (r.mode == "inference") {
    m.mode = graph::Mode::kInference;
  } else if (r.mode == "training (fwd+bwd, no optimizer)" || r.mode == "training_forward" ||
             r.mode == "training_backward") {
    m.mode = graph::Mode::kTraining;
  } else if (r.mode == "training") {
    m.mode = graph::Mode::kTraining;
    m.optimizer_step = true;
  } else {
    return skip("mode '" + r.mode + "' is not one training or inference iteration");
  }
  if (r.mode == "training_forward") m.part = network::TimedPart::kForward;
  if (r.mode == "training_backward") m.part = network::TimedPart::kBackward;
  if (!maps.gpus.contains(r.gpu) || maps.gpus.at(r.gpu).is_null()) {
    return skip("GPU '" + r.gpu + "' is not in the device catalog");
  }
  m.device_id = maps.gpus.at(r.gpu).get<std::string>();
  const auto precision = precision_of(r.precision.value_or(""));
  if (!precision) return skip("precision '" + r.precision.value_or("") + "' not understood");
  m.precision = *precision;
  std::optional<NetworkMapping> mapping;
  if (r.layer) {
    // A per-operator record: the nodes that compute it, from layer_ops.json.
    const nlohmann::json& ops = maps.layer_ops.at("records");
    if (!ops.contains(r.id)) {
      const nlohmann::json& unmapped = maps.layer_ops.at("unmapped");
      return skip(unmapped.contains(r.id)
                      ? "operator not in the architecture: " + unmapped.at(r.id).get<std::string>()
                      : std::string("operator not in data/calibration/layer_ops.json"));
    }
    try {
      const nlohmann::json& op = ops.at(r.id);
      mapping = NetworkMapping{data_dir / op.at("file").get<std::string>(),
                               op.at("dims").get<std::map<std::string, std::int64_t>>()};
      m.nodes = op.at("nodes").get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& e) {
      throw InvalidInput(
          fmt::format("{}: records.{}: expected \"file\", \"dims\" (name → size) "
                      "and \"nodes\" (node names): {}",
                      (maps.dir / "layer_ops.json").string(), r.id, e.what()));
    }
  } else {
    mapping = network_of(maps.networks, maps.zoo, data_dir, r, why);
    if (!mapping) return std::nullopt;
  }
  if (!r.value_si || !(*r.value_si > 0)) return skip("no positive SI value");
  m.id = r.id;
  m.source = r.source;
  m.grade = r.grade;
  m.network = r.network;
  m.model = mapping->model;
  m.bindings.batch = *batch;
  m.bindings.named = mapping->dims;
  const std::string source = source_key(r.source);
  if (maps.protocols.contains(source)) {
    const nlohmann::json& protocol = maps.protocols.at(source);
    const auto copy = protocol.find("input_copy");
    if (copy != protocol.end() && !copy->is_boolean()) {
      throw InvalidInput((maps.dir / "protocols.json").string() + ": sources." + source +
                         ".input_copy: expected true or false");
    }
    m.input_copied = copy != protocol.end() && copy->get<bool>();
    const auto hosts = protocol.find("hosts");
    if (hosts != protocol.end()) {
      const auto host = hosts->is_object() ? hosts->find(m.device_id) : hosts->end();
      if (!hosts->is_object() || (host != hosts->end() && !host->is_string())) {
        throw InvalidInput((maps.dir / "protocols.json").string() + ": sources." + source +
                           ".hosts: expected an object of GPU id → host machine name");
      }
      if (host != hosts->end()) m.host = host->get<std::string>();
    }
  }
  m.winograd = winograd_passes(r.framework);
  m.eager_pytorch = r.framework.find("PyTorch") != std::string::npos;
  return m;
}

// The records that repeat a run of their source under a less preferred quantity
// (protocols.json: one_figure_per_run, quantities in order of preference; a run is the same
// source, GPU, network, mode, precision and batch): record id → why it is skipped, naming the
// record scored instead.
std::map<std::string, std::string> repeated_runs(
    const std::vector<published::PublishedMeasurement>& records, const Mappings& maps) {
  using Run = std::tuple<std::string, std::string, std::string, std::string, std::string,
                         std::optional<std::int64_t>>;
  struct Preferred {
    std::size_t rank;
    std::string id;
    std::string quantity;
  };
  std::map<Run, Preferred> best;
  std::map<std::string, std::pair<Run, std::size_t>> ranked;  // record id → run, rank
  std::map<std::string, std::string> why_of_source;
  std::map<std::string, std::string> ranked_quantity;  // record id → its quantity
  for (const published::PublishedMeasurement& r : records) {
    const std::string source = source_key(r.source);
    if (!maps.protocols.contains(source)) continue;
    const nlohmann::json& protocol = maps.protocols.at(source);
    const auto rule = protocol.find("one_figure_per_run");
    if (rule == protocol.end()) continue;
    const auto quantities = rule->is_object() ? rule->find("quantities") : rule->end();
    if (!rule->is_object() || quantities == rule->end() || !quantities->is_array() ||
        !std::all_of(quantities->begin(), quantities->end(),
                     [](const nlohmann::json& q) { return q.is_string(); })) {
      throw InvalidInput((maps.dir / "protocols.json").string() + ": sources." + source +
                         ".one_figure_per_run: expected {\"quantities\": [quantity names in "
                         "order of preference], \"why\": text}");
    }
    const auto at = std::find(quantities->begin(), quantities->end(), r.quantity);
    if (at == quantities->end()) continue;
    const auto rank = static_cast<std::size_t>(at - quantities->begin());
    const Run run{r.source, r.gpu, r.network, r.mode, r.precision.value_or(""), r.batch};
    ranked[r.id] = {run, rank};
    ranked_quantity[r.id] = r.quantity;
    why_of_source[r.id] = rule->value("why", std::string());
    const auto [it, inserted] = best.try_emplace(run, Preferred{rank, r.id, r.quantity});
    if (!inserted && rank < it->second.rank) it->second = {rank, r.id, r.quantity};
  }
  std::map<std::string, std::string> repeated;
  for (const auto& [id, run_rank] : ranked) {
    const Preferred& scored = best.at(run_rank.first);
    if (scored.id == id) continue;
    // Without the scored record's id, so that the skipped records group under one reason; the
    // scored one is the record of the same run with that quantity.
    repeated[id] = fmt::format(
        "{} of a run whose {} is published too, which is scored instead: {} "
        "(data/calibration/protocols.json)",
        ranked_quantity.at(id), scored.quantity, why_of_source.at(id));
  }
  return repeated;
}

// What a record's quantity measures of a run.
enum class Figure { kTime, kPower, kEnergy };

// The figure `quantity` measures, and for a time the part of the iteration it covers; empty for
// a quantity nnergy does not predict.
std::optional<Figure> figure_of(const std::string& quantity, network::TimedPart* part) {
  *part = network::TimedPart::kIteration;
  if (quantity == "forward_time_per_iteration") {
    *part = network::TimedPart::kForward;
  } else if (quantity == "backward_time_per_iteration") {
    *part = network::TimedPart::kBackward;
  } else if (quantity == "avg_power") {
    return Figure::kPower;
  } else if (quantity == "energy_per_iteration") {
    return Figure::kEnergy;
  } else if (quantity != "time_per_iteration" && quantity != "latency_avg_per_batch" &&
             quantity != "throughput" && quantity != "layer_forward_time") {
    return std::nullopt;
  }
  return Figure::kTime;
}

// The SI unit a power or energy record must give its value in.
std::string_view si_unit_of(Figure figure) { return figure == Figure::kPower ? "W" : "J"; }

// The records whose quantity is one of `wanted` as measurements. A record of another quantity is
// skipped with "quantity '<q>'" + `other_reason`, or ignored when `other_reason` is empty.
PublishedFigures figures_of(const std::vector<published::PublishedMeasurement>& records,
                            const std::filesystem::path& data_dir,
                            const std::vector<std::string>& grades, const std::set<Figure>& wanted,
                            const std::optional<std::string>& other_reason) {
  const Mappings maps = read_mappings(data_dir);
  const std::map<std::string, std::string> repeated = repeated_runs(records, maps);
  PublishedFigures out;
  for (const published::PublishedMeasurement& r : records) {
    network::TimedPart part = network::TimedPart::kIteration;
    const std::optional<Figure> figure = figure_of(r.quantity, &part);
    if (!figure || !wanted.contains(*figure)) {
      if (other_reason)
        out.skipped.emplace_back(r.id, "quantity '" + r.quantity + "'" + *other_reason);
      continue;
    }
    if (const auto it = repeated.find(r.id); it != repeated.end()) {
      out.skipped.emplace_back(r.id, it->second);
      continue;
    }
    std::string why;
    std::optional<std::string> assumption;
    auto m = run_of(r, part, maps, data_dir, grades, &why, &assumption);
    if (m && *figure != Figure::kTime && r.unit_si != si_unit_of(*figure)) {
      why = fmt::format("{} given in '{}', expected '{}'", r.quantity, r.unit_si,
                        si_unit_of(*figure));
      m.reset();
    }
    if (!m) {
      out.skipped.emplace_back(r.id, why);
      continue;
    }
    if (assumption) out.assumptions.emplace_back(r.id, *assumption);
    switch (*figure) {
      case Figure::kTime: {
        const auto batch = static_cast<double>(*m->bindings.batch);
        m->measured_s = r.quantity == "throughput" ? batch / *r.value_si : *r.value_si;
        out.times.push_back(std::move(*m));
        break;
      }
      case Figure::kPower:
        out.powers.push_back({std::move(*m), *r.value_si});
        break;
      case Figure::kEnergy:
        out.energies.push_back({std::move(*m), *r.value_si});
        break;
    }
  }
  return out;
}

}  // namespace

void check_grades(const std::vector<std::string>& grades, SettingNames names) {
  const auto& known = published::published_grades();
  for (const std::string& g : grades) {
    if (std::find(known.begin(), known.end(), g) == known.end()) {
      throw InvalidInput(setting_with_value(names, "grades", g) + ": expected A, B or C");
    }
  }
}

PublishedTimes published_times(const std::vector<published::PublishedMeasurement>& records,
                               const std::filesystem::path& data_dir,
                               const std::vector<std::string>& grades) {
  PublishedFigures f =
      figures_of(records, data_dir, grades, {Figure::kTime}, " is not a whole-network time");
  return {std::move(f.times), std::move(f.skipped), std::move(f.assumptions)};
}

PublishedPowers published_powers(const std::vector<published::PublishedMeasurement>& records,
                                 const std::filesystem::path& data_dir,
                                 const std::vector<std::string>& grades) {
  PublishedFigures f = figures_of(records, data_dir, grades, {Figure::kPower}, std::nullopt);
  return {std::move(f.powers), std::move(f.skipped), std::move(f.assumptions)};
}

PublishedEnergies published_energies(const std::vector<published::PublishedMeasurement>& records,
                                     const std::filesystem::path& data_dir,
                                     const std::vector<std::string>& grades) {
  PublishedFigures f = figures_of(records, data_dir, grades, {Figure::kEnergy}, std::nullopt);
  return {std::move(f.energies), std::move(f.skipped), std::move(f.assumptions)};
}

PublishedBandwidths published_bandwidths(
    const std::vector<published::PublishedMeasurement>& records,
    const std::filesystem::path& data_dir) {
  const nlohmann::json gpus = read_mapping(data_dir / "calibration" / "gpus.json").at("gpus");
  PublishedBandwidths out;
  for (const published::PublishedMeasurement& r : records) {
    if (r.quantity != "achieved_fraction_of_peak_bandwidth" || r.network != "memory copy kernel")
      continue;
    if (!gpus.contains(r.gpu) || !gpus.at(r.gpu).is_string()) {
      out.skipped.emplace_back(r.id, "GPU '" + r.gpu + "' is not in the device catalog");
    } else if (r.unit_si != "fraction" || !r.value_si || !(*r.value_si > 0 && *r.value_si <= 1)) {
      out.skipped.emplace_back(r.id, "expected a fraction in (0, 1] of the datasheet bandwidth");
    } else {
      out.anchors.push_back({r.id, gpus.at(r.gpu).get<std::string>(), *r.value_si});
    }
  }
  return out;
}

PublishedFigures published_figures(const std::vector<published::PublishedMeasurement>& records,
                                   const std::filesystem::path& data_dir,
                                   const std::vector<std::string>& grades) {
  return figures_of(records, data_dir, grades, {Figure::kTime, Figure::kPower, Figure::kEnergy},
                    " is not a whole-network time, average power or energy per iteration");
}

}  // namespace nnergy::calibration
