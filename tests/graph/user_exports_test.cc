// User-style ONNX exports (tests/fixtures/user_exports, written by tools/export_user_models.py):
// every file imports at two batch sizes, and nnergy's MAC and parameter counts match the ones
// PyTorch gives for the same model (counted at dispatch level, not by nnergy).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/op_catalog.h"

namespace nnergy::graph {
namespace {

const std::filesystem::path kExportDir =
    std::filesystem::path(NNERGY_TEST_FIXTURE_DIR) / "user_exports";

// The manifest's MACs are exact counts of the PyTorch run; 1 % leaves room for conventions
// that differ in detail (none is known to).
constexpr double kMacRelativeTolerance = 0.01;
// The corpus has more entries than this; fewer means the manifest was not read right.
constexpr std::size_t kMinimumManifestEntries = 25;

struct UserExportCase {
  std::string name;  ///< file stem and batch, a valid test name
  std::string file;
  std::string description;
  std::int64_t batch = 1;
  DimBindings bindings;
  double macs = 0;
  std::int64_t parameters = 0;
  std::string parameter_note;
  /// Why nnergy must refuse this batch (a static export it cannot re-bind soundly), or "".
  std::string refusal;
};

void PrintTo(const UserExportCase& c, std::ostream* os) { *os << c.name; }

nlohmann::json read_manifest() {
  std::ifstream in(kExportDir / "manifest.json");
  if (!in) return nlohmann::json::object();
  return nlohmann::json::parse(in);
}

// Called while the test suite is instantiated: never throws, an unreadable manifest gives no
// cases (and ManifestListsTheCorpus fails).
std::vector<UserExportCase> load_cases() {
  std::vector<UserExportCase> cases;
  try {
    const nlohmann::json manifest = read_manifest();
    for (const auto& model : manifest.value("models", nlohmann::json::array())) {
      const std::string file = model.at("file");
      const std::string stem = std::filesystem::path(file).stem().string();
      for (const auto& entry : model.at("cases")) {
        UserExportCase c;
        c.file = file;
        c.description = model.at("description");
        c.batch = entry.at("batch");
        c.name = stem + "_batch" + std::to_string(c.batch);
        c.bindings.batch = entry.at("bindings").at("batch");
        for (const auto& [dim, value] : entry.at("bindings").at("named").items()) {
          c.bindings.named[dim] = value.get<std::int64_t>();
        }
        c.macs = entry.at("macs").get<double>();
        c.refusal = entry.value("nnergy_refuses", "");
        c.parameters = model.at("parameters_expected");
        c.parameter_note = model.value("parameter_note", "");
        cases.push_back(std::move(c));
      }
    }
  } catch (const std::exception&) {
    cases.clear();
  }
  return cases;
}

TEST(UserExportsManifest, ListsTheCorpus) {
  const nlohmann::json manifest = read_manifest();
  ASSERT_TRUE(manifest.contains("models")) << (kExportDir / "manifest.json");
  EXPECT_GE(manifest.at("models").size(), kMinimumManifestEntries);
  for (const auto& model : manifest.at("models")) {
    const std::string file = model.at("file");
    EXPECT_TRUE(std::filesystem::exists(kExportDir / file)) << file;
    EXPECT_EQ(model.at("cases").size(), 2u) << file;
  }
  EXPECT_EQ(load_cases().size(), 2 * manifest.at("models").size());
}

class UserExports : public ::testing::TestWithParam<UserExportCase> {};

TEST_P(UserExports, MacsAndParametersMatchPyTorch) {
  const UserExportCase& c = GetParam();
  SCOPED_TRACE(c.file + " (" + c.description + "), batch " + std::to_string(c.batch));
  Network net;
  try {
    net = import_onnx(kExportDir / c.file, c.bindings);
  } catch (const InvalidInput& e) {
    if (!c.refusal.empty()) {
      // Refused as it must be, with the fix in the message.
      EXPECT_THAT(e.what(), ::testing::HasSubstr("cannot be applied soundly"));
      EXPECT_THAT(e.what(), ::testing::HasSubstr("dynamic_axes={\"input\": {0: \"batch\"}"));
      return;
    }
    FAIL() << "import failed: " << e.what();
  } catch (const std::exception& e) {
    FAIL() << "import failed: " << e.what();
  }
  ASSERT_TRUE(c.refusal.empty()) << "nnergy re-bound the batch although " << c.refusal;
  double macs = 0;
  std::map<std::string, double> macs_by_op;
  for (const Node& node : net.nodes()) {
    const double node_macs = op_cost(net, node).inference.mac_count;
    macs += node_macs;
    if (node_macs > 0) macs_by_op[node.op_type] += node_macs;
  }
  std::string breakdown;
  for (const auto& [op, m] : macs_by_op) breakdown += " " + op + " " + std::to_string(m / 1e6);
  EXPECT_NEAR(macs, c.macs, kMacRelativeTolerance * c.macs)
      << "nnergy counts " << macs / 1e9 << " GMAC, PyTorch " << c.macs / 1e9 << " GMAC (ratio "
      << macs / c.macs << "); nnergy MMAC by op:" << breakdown;
  EXPECT_EQ(net.parameter_count(), c.parameters) << c.parameter_note;
}

std::string case_name(const ::testing::TestParamInfo<UserExportCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Manifest, UserExports, ::testing::ValuesIn(load_cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(UserExports);

}  // namespace
}  // namespace nnergy::graph
