#include "nnergy/archline/user_catalog_update.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nnergy/core/atomic_file.h"
#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/core/setting_name.h"
#include "nnergy/core/text.h"
#include "nnergy/device/device_catalog.h"

namespace nnergy::archline {

namespace {

using nlohmann::ordered_json;

ordered_json read_catalog_json(const std::filesystem::path& path, const std::string& flag) {
  std::ifstream file(path);
  if (!file) throw InvalidInput(flag + " " + path.string() + ": cannot open device catalog");
  std::ostringstream text;
  text << file.rdbuf();
  ordered_json root;
  try {
    root = core::parse_ordered_json_document(text.str(), flag + " " + path.string());
  } catch (const ordered_json::exception& e) {  // parse_error, or out_of_range: a number > 1e308
    throw InvalidInput(flag + " " + path.string() + ": not valid JSON (" + e.what() + ")");
  }
  if (!root.is_object() || !root.contains("devices") || !root["devices"].is_array()) {
    throw InvalidInput(flag + " " + path.string() +
                       ": expected a JSON object with a \"devices\" array");
  }
  return root;
}

// The entry whose id or alias is `key` (lower case), or nullptr.
ordered_json* find_entry(ordered_json& root, const std::string& key) {
  for (ordered_json& entry : root["devices"]) {
    if (entry.contains("id") && entry["id"].is_string() &&
        ascii_lower(entry["id"].get<std::string>()) == key) {
      return &entry;
    }
  }
  for (ordered_json& entry : root["devices"]) {
    if (!entry.contains("aliases") || !entry["aliases"].is_array()) continue;
    for (const ordered_json& alias : entry["aliases"]) {
      if (alias.is_string() && ascii_lower(alias.get<std::string>()) == key) return &entry;
    }
  }
  return nullptr;
}

}  // namespace

void save_fitted_device(const std::filesystem::path& user_catalog, const std::string& name,
                        const std::vector<FittedParameters>& fits,
                        const std::filesystem::path& builtin_catalog,
                        const std::optional<std::string>& base_device, SettingNames names) {
  const std::string id = ascii_lower(name);
  if (id.empty() || id.find_first_of(" \t\n,") != std::string::npos) {
    throw InvalidInput(setting_with_value(names, "save_device", "'" + name + "'") +
                       ": expected a device id without spaces or commas");
  }
  std::error_code ec;
  ordered_json root = std::filesystem::exists(user_catalog, ec)
                          ? read_catalog_json(user_catalog, "user catalog")
                          : ordered_json{{"schema_version", 1}, {"devices", ordered_json::array()}};

  ordered_json* entry = find_entry(root, id);
  if (entry != nullptr && ascii_lower((*entry)["id"].get<std::string>()) != id) entry = nullptr;
  if (entry == nullptr) {
    const std::string base = ascii_lower(base_device.value_or(name));
    ordered_json builtin = read_catalog_json(builtin_catalog, "built-in catalog");
    const ordered_json* found = find_entry(root, base);
    if (found == nullptr) found = find_entry(builtin, base);
    if (found == nullptr) {
      throw InvalidInput(setting_with_value(names, "save_device", name) + ": '" + base +
                         "' is neither in the user catalog " + user_catalog.string() +
                         " nor in the built-in catalog; give " +
                         setting_with_value(names, "base_device", "ID") +
                         ", a catalog device whose peaks, clocks and power limits the new entry "
                         "copies");
    }
    ordered_json copy = *found;
    // The base's efficiencies are the catalog's estimates: without them, the new device takes
    // the calibrated time model of its generation, like the base itself.
    copy.erase("efficiency");
    if (ascii_lower(copy["id"].get<std::string>()) != id) {
      copy["id"] = id;
      copy["aliases"] = ordered_json::array();
      copy["name"] = copy.value("name", id) + " (archline fit)";
    }
    root["devices"].push_back(copy);
    entry = &root["devices"].back();
  }
  ordered_json& archline = (*entry)["archline"];
  if (!archline.is_object()) archline = ordered_json::object();
  for (const FittedParameters& f : fits) {
    const std::string key(device::to_string(f.precision));
    archline[key] = {{"eps_flop_pj", f.eps_flop_j * 1e12},
                     {"eps_mem_pj_per_byte", f.eps_mem_j_per_byte * 1e12},
                     {"pi0_w", f.pi0_w},
                     {"source", f.source},
                     {"estimated", false}};
    if (entry->contains("estimated_fields") && (*entry)["estimated_fields"].is_array()) {
      ordered_json kept = ordered_json::array();
      for (const ordered_json& field : (*entry)["estimated_fields"]) {
        if (field != "archline." + key) kept.push_back(field);
      }
      (*entry)["estimated_fields"] = kept;
    }
  }
  const std::string text = root.dump(2) + "\n";
  // The loader must accept what we write: a broken user catalog would break every command.
  device::DeviceCatalog::parse(text, user_catalog.string());
  // The user catalog's directory (e.g. ~/.config/nnergy) may not exist yet.
  std::error_code ignored;
  if (user_catalog.has_parent_path()) {
    std::filesystem::create_directories(user_catalog.parent_path(), ignored);
  }
  write_file_atomically(user_catalog, text, setting_name(names, "save_device"));
}

}  // namespace nnergy::archline
