#include "nnergy/graph/zoo.h"

#include <algorithm>

#include "nnergy/core/error.h"

namespace nnergy::graph {

std::vector<ZooModel> list_zoo(const std::filesystem::path& data_dir) {
  std::vector<ZooModel> models;
  const std::filesystem::path zoo_dir = data_dir / "zoo";
  std::error_code ec;
  if (!std::filesystem::is_directory(zoo_dir, ec)) return models;
  for (const auto& entry : std::filesystem::directory_iterator(zoo_dir)) {
    if (entry.path().extension() == ".onnx") {
      models.push_back({entry.path().stem().string(), entry.path()});
    }
  }
  std::sort(models.begin(), models.end(),
            [](const ZooModel& a, const ZooModel& b) { return a.name < b.name; });
  return models;
}

std::filesystem::path resolve_model(const std::string& name_or_path,
                                    const std::filesystem::path& data_dir) {
  if (name_or_path.empty()) throw InvalidInput("model: expected a zoo name or an .onnx path");
  const bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                               std::filesystem::path(name_or_path).extension() == ".onnx";
  if (looks_like_path) return name_or_path;
  std::vector<std::string> names;
  for (const ZooModel& model : list_zoo(data_dir)) {
    if (model.name == name_or_path) return model.path;
    names.push_back(model.name);
  }
  throw InvalidInput("model '" + name_or_path + "': not a zoo name nor an .onnx path; zoo: " +
                     (names.empty() ? std::string("(empty: ") + (data_dir / "zoo").string() + ")"
                                    : join_with_commas(names)));
}

}  // namespace nnergy::graph
