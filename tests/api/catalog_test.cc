// api::devices, api::zoo and DeviceCatalog::load_with_user.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "nnergy/api/devices.h"
#include "nnergy/api/zoo.h"
#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/graph/onnx_importer.h"
#include "nnergy/graph/op_signature.h"
#include "temp_dir_test.h"

namespace nnergy::api {
namespace {

using testing::HasSubstr;

class DevicesFileTest : public test_support::TempDirTest {
 protected:
  // A user catalog with one device: the first built-in one under another id and alias.
  std::filesystem::path write_devices_file() {
    std::ifstream in(data_directory() / "devices.json");
    nlohmann::json catalog = nlohmann::json::parse(in);
    nlohmann::json device = catalog["devices"][0];
    device["id"] = "my-gpu";
    device["aliases"] = {"mine"};
    device["name"] = "My GPU";
    catalog["devices"] = nlohmann::json::array({device});
    const std::filesystem::path path = dir_ / "devices.json";
    std::ofstream(path) << catalog.dump();
    return path;
  }
};

TEST_F(DevicesFileTest, LoadWithUserMergesTheFileOverTheDefaultCatalog) {
  const std::filesystem::path data_dir = data_directory();
  const device::DeviceCatalog plain = device::DeviceCatalog::load_with_user(data_dir, {});
  const device::DeviceCatalog merged =
      device::DeviceCatalog::load_with_user(data_dir, write_devices_file());
  EXPECT_EQ(plain.devices().size(), device::DeviceCatalog::load_default(data_dir).devices().size());
  EXPECT_EQ(merged.devices().size(), plain.devices().size() + 1);
  EXPECT_EQ(merged.find("mine").id, "my-gpu");
  EXPECT_EQ(merged.sources().back(), (dir_ / "devices.json").string());
}

TEST_F(DevicesFileTest, DevicesShowsTheCatalogOrOneDevice) {
  DevicesRequest r;
  r.devices_file = write_devices_file();
  r.command_line = "api_test";
  const report::DevicesReport all = devices(r);
  EXPECT_FALSE(all.device.has_value());
  const nlohmann::ordered_json j = report::to_json(all);
  EXPECT_EQ(j["context"]["command_line"], "api_test");
  EXPECT_EQ(j["devices"].size(), all.catalog.devices().size());
  EXPECT_THAT(report::render_text(all), HasSubstr("my-gpu"));

  r.device = "mine";
  const report::DevicesReport one = devices(r);
  ASSERT_TRUE(one.device.has_value());
  EXPECT_EQ(one.device->id, "my-gpu");
  EXPECT_EQ(report::to_json(one)["id"], "my-gpu");
  EXPECT_THAT(report::render_text(one), HasSubstr("My GPU (my-gpu)"));

  r.device = "no-such-gpu";
  EXPECT_THROW(devices(r), InvalidInput);
}

TEST(ApiDevices, DetectionNeverThrowsAndExplainsAbsentSources) {
  const report::PowerSourcesReport found = detect_power_sources();
  const nlohmann::ordered_json j = report::to_json(found);
  EXPECT_EQ(j["sources"].size(), found.sources.size());
  for (const measure::Unavailable& u : found.unavailable) EXPECT_FALSE(u.reason.empty());
}

TEST(ApiZoo, CountsOperationsAsUniqueOperationsGroupsThem) {
  const report::ZooReport zoo = api::zoo();
  ASSERT_FALSE(zoo.models.empty());
  EXPECT_EQ(zoo.directory, data_directory() / "zoo");
  const auto it = std::find_if(zoo.models.begin(), zoo.models.end(),
                               [](const report::ZooEntry& e) { return e.name == "resnet50"; });
  ASSERT_NE(it, zoo.models.end());
  const graph::Network net = graph::import_onnx(zoo.directory / "resnet50.onnx", {});
  const auto unique = graph::unique_operations(net, graph::Whitelist::standard());
  std::size_t operations = 0;
  for (const graph::UniqueOperation& op : unique) operations += op.count();
  EXPECT_EQ(it->unique_operations, unique.size());
  EXPECT_EQ(it->operations, operations);
  // ResNet-50: 4.1 GMACs per 224×224 image.
  EXPECT_NEAR(it->mac_count_per_sample / 1e9, 4.1, 0.1);
  EXPECT_NEAR(it->parameter_count / 1e6, 25.6, 0.1);
  EXPECT_EQ(report::to_json(zoo).size(), zoo.models.size());
}

}  // namespace
}  // namespace nnergy::api
