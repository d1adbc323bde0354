// The exports nnergy used to get wrong or refuse (tests/fixtures/user_exports_modern, written by
// tools/export_user_models_modern.py with PyTorch-counted MACs): fp16 and bf16 files,
// sequence-first static layouts, torchvision detection with data-dependent counts, Llama
// grouped-query attention with repeat_interleave, opsets 11-17. Each case is the right answer
// or a refusal that names the cause, never a silently wrong number.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nnergy/core/error.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/op_catalog.h"

namespace nnergy::graph {
namespace {

const std::filesystem::path kDir =
    std::filesystem::path(NNERGY_TEST_FIXTURE_DIR) / "user_exports_modern";

// PyTorch's counts are exact; 1 % leaves room for conventions that differ in detail.
constexpr double kMacTolerance = 0.01;
constexpr std::size_t kMinimumEntries = 25;

struct ModernCase {
  std::string name;
  std::string file;
  nlohmann::json model;
  nlohmann::json entry;  ///< the manifest's case
};

void PrintTo(const ModernCase& c, std::ostream* os) { *os << c.name; }

nlohmann::json manifest() {
  std::ifstream in(kDir / "manifest.json");
  if (!in) return nlohmann::json::object();
  return nlohmann::json::parse(in);
}

std::vector<ModernCase> cases() {
  std::vector<ModernCase> out;
  try {
    for (const auto& model : manifest().value("models", nlohmann::json::array())) {
      for (const auto& c : model.at("cases")) {
        std::string stem = std::filesystem::path(model.at("file").get<std::string>()).stem();
        for (char& ch : stem)
          if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
        out.push_back({stem + "_batch" + std::to_string(c.at("batch").get<int>()), model.at("file"),
                       model, c});
      }
    }
  } catch (const std::exception&) {
    // An unreadable manifest gives no cases; ListsTheCorpus fails.
  }
  return out;
}

DimBindings bindings_of(const nlohmann::json& c) {
  DimBindings b;
  b.batch = c.at("bindings").at("batch").get<std::int64_t>();
  for (const auto& [name, value] : c.at("bindings").at("named").items()) b.named[name] = value;
  return b;
}

double macs_of(const Network& net) {
  double macs = 0;
  for (const Node& node : net.nodes()) macs += op_cost(net, node).inference.mac_count;
  return macs;
}

TEST(UserExportsModern, ListsTheCorpus) {
  const nlohmann::json m = manifest();
  ASSERT_TRUE(m.contains("models")) << kDir / "manifest.json";
  EXPECT_GE(m.at("models").size(), kMinimumEntries);
}

class UserExportsModern : public ::testing::TestWithParam<ModernCase> {};

TEST_P(UserExportsModern, RightAnswerOrARefusalThatNamesTheCause) {
  const ModernCase& c = GetParam();
  const std::int64_t batch = c.entry.at("batch");
  SCOPED_TRACE(c.file + ", batch " + std::to_string(batch));
  const bool detection = c.model.contains("data_dependent");
  // A detection export takes one image: another batch is refused, saying so.
  if (detection && batch != 1) {
    try {
      import_onnx(kDir / c.file, bindings_of(c.entry));
      FAIL() << "a single-image detection export re-bound to batch " << batch;
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("no batch axis"));
      EXPECT_THAT(e.what(), ::testing::HasSubstr("detection models take a list of images"));
    }
    return;
  }
  // torch 1.13 writes repeat_interleave with a dynamic size as a Loop whose shapes contradict
  // the graph once unrolled: refused, naming the export and its fix.
  if (c.file == "llama_gqa_repeat_interleave_dynamic.onnx") {
    try {
      import_onnx(kDir / c.file, bindings_of(c.entry));
      FAIL() << "an inconsistent export was imported";
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("repeat_interleave"));
      EXPECT_THAT(e.what(), ::testing::HasSubstr("repeat_kv"));
    }
    return;
  }
  const Network net = import_onnx(kDir / c.file, bindings_of(c.entry));
  EXPECT_EQ(net.batch, batch);
  double expected = c.entry.at("macs").get<double>();
  if (detection) {
    // At the counts the model's own constants fix (proposals per image, detections).
    expected = c.model.at("data_dependent").at("macs_at_constant_counts").at(std::to_string(batch));
  }
  EXPECT_NEAR(macs_of(net), expected, kMacTolerance * expected);
  const std::string precision = c.model.value("precision", "fp32");
  ASSERT_TRUE(net.stored_floating_type().has_value());
  EXPECT_EQ(to_string(*net.stored_floating_type()), precision);
}

std::string case_name(const ::testing::TestParamInfo<ModernCase>& c) { return c.param.name; }

INSTANTIATE_TEST_SUITE_P(Manifest, UserExportsModern, ::testing::ValuesIn(cases()), case_name);

// Without --batch, a static file's batch is the axis its layout puts it on: 8 for the
// sequence-first nn.Transformer exported with 64 source tokens, not 64.
TEST(UserExportsModernLayout, SequenceFirstStaticFilesComputeTheirRealBatch) {
  for (const auto& model : manifest().value("models", nlohmann::json::array())) {
    if (model.value("batch_axis", nlohmann::json()) != 1) continue;
    const std::string file = model.at("file");
    SCOPED_TRACE(file);
    const Network net = import_onnx(kDir / file, DimBindings{});
    EXPECT_EQ(net.batch, model.at("exported_batch").get<std::int64_t>());
    ASSERT_FALSE(net.import_notes.empty());
    bool said = false;
    for (const std::string& n : net.import_notes)
      said |= n.find("sequence-first") != std::string::npos;
    EXPECT_TRUE(said) << "no note on the layout";
  }
}

// The detection models: the counts that depend on the data are assumed and said so.
TEST(UserExportsModernLayout, DetectionCountsAreAssumedAndSaid) {
  const Network net = import_onnx(kDir / "fasterrcnn_resnet50_fpn.onnx", DimBindings{});
  std::string notes;
  for (const std::string& n : net.import_notes) notes += n + "\n";
  EXPECT_THAT(notes, ::testing::HasSubstr("assumed, not known"));
  EXPECT_THAT(notes, ::testing::HasSubstr("RoiAlign pools 1000"));
  EXPECT_THAT(notes, ::testing::HasSubstr("override one with --dim"));
}

}  // namespace
}  // namespace nnergy::graph
