#include "nnergy/llm/model_catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nnergy/core/data_directory.h"
#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/core/nearest_name.h"
#include "nnergy/core/text.h"
#include "nnergy/llm/config_reader.h"

namespace nnergy::llm {

namespace {

using json = nlohmann::json;

std::string without_organisation(const std::string& name) {
  const std::size_t slash = name.find('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

// Suffixes of derived checkpoints that keep the architecture, and the weight format a suffix
// names (empty: none).
struct Suffix {
  const char* text;
  const char* format;
};
constexpr Suffix kSuffixes[] = {
    {"-fp8-dynamic", "fp8"}, {"-fp8", "fp8"},   {"-awq", "int4"},   {"-gptq-int4", "int4"},
    {"-gptq", "int4"},       {"-int4", "int4"}, {"-w4a16", "int4"}, {"-mxfp4", "mxfp4"},
    {"-nvfp4", "nvfp4"},     {"-fp4", "nvfp4"}, {"-w8a8", "int8"},  {"-int8", "int8"},
    {"-instruct", ""},       {"-chat", ""},     {"-it", ""},        {"-hf", ""},
    {"-base", ""},           {"-pt", ""},
};

bool is_date_suffix(const std::string& s, std::size_t dash) {
  // "-2507", "-2407", "-20240718".
  const std::size_t n = s.size() - dash - 1;
  if (n != 4 && n != 8) return false;
  for (std::size_t i = dash + 1; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

// The lower-case name without organisation, a leading "meta-" and the suffixes above; `format`
// receives the weight format a suffix named.
std::string canonical(const std::string& name, std::string* format) {
  std::string s = ascii_lower(without_organisation(name));
  if (s.rfind("meta-", 0) == 0) s = s.substr(5);
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const Suffix& suffix : kSuffixes) {
      const std::string t = suffix.text;
      if (s.size() > t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0) {
        s.resize(s.size() - t.size());
        if (format != nullptr && *suffix.format != '\0' && format->empty()) *format = suffix.format;
        stripped = true;
      }
    }
    const std::size_t dash = s.rfind('-');
    if (dash != std::string::npos && dash > 0 && is_date_suffix(s, dash)) {
      s.resize(dash);
      stripped = true;
    }
  }
  return s;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InvalidInput(path.string() + ": cannot open the model catalog");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<double> number_or_null(const json& object, const char* key) {
  if (!object.contains(key) || !object[key].is_number()) return std::nullopt;
  return object[key].get<double>();
}

}  // namespace

ModelCatalog ModelCatalog::load(const std::filesystem::path& path) {
  json root;
  try {
    root = core::parse_json_document(read_text(path), path.string());
  } catch (const json::exception& e) {
    throw InvalidInput(path.string() + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!root.is_object() || !root.contains("models") || !root["models"].is_array()) {
    throw InvalidInput(path.string() + ": expected a JSON object with a \"models\" array");
  }
  ModelCatalog catalog;
  catalog.source_ = path.string();
  for (std::size_t i = 0; i < root["models"].size(); ++i) {
    const json& entry = root["models"][i];
    const std::string where = fmt::format("{}: models[{}]", path.string(), i);
    if (!entry.is_object() || !entry.contains("id") || !entry["id"].is_string() ||
        !entry.contains("config")) {
      throw InvalidInput(where + ": expected an object with \"id\" and \"config\"");
    }
    CatalogModel m;
    m.id = entry["id"].get<std::string>();
    for (const json& a : entry.value("aliases", json::array()))
      if (a.is_string()) m.aliases.push_back(a.get<std::string>());
    m.family = entry.value("family", "");
    m.release_date = entry.value("release_date", "");
    if (entry.contains("format_variants") && entry["format_variants"].is_object()) {
      for (const auto& [id, format] : entry["format_variants"].items())
        if (format.is_string()) m.format_variants.emplace_back(id, format.get<std::string>());
    }
    m.architecture = read_config(entry["config"], fmt::format("{} ('{}') config", where, m.id));
    m.architecture.id = m.id;
    if (entry.contains("weight_format") && entry["weight_format"].is_string())
      m.architecture.weight_format = entry["weight_format"].get<std::string>();
    m.architecture.source = entry.value("config_source", "");
    if (entry.contains("published_parameters") && entry["published_parameters"].is_object()) {
      const json& p = entry["published_parameters"];
      m.architecture.published_total_b = number_or_null(p, "total_b");
      m.architecture.published_active_b = number_or_null(p, "active_b");
      m.architecture.published_source = p.value("source", "");
      m.architecture.published_includes_vision = p.value("includes_vision_encoder", false);
      m.architecture.published_size_class = p.value("size_class", false);
      m.architecture.published_active_excludes_embedding =
          p.value("active_excludes_embedding", false);
    }
    catalog.models_.push_back(std::move(m));
  }
  return catalog;
}

ModelCatalog ModelCatalog::load_default() { return load(data_directory() / "llm" / "models.json"); }

std::optional<ResolvedModel> ModelCatalog::resolve(const std::string& name) const {
  const std::string key = ascii_lower(name);
  // 1. An id, alias or format variant, exactly (case aside); 2. the same without organisation.
  for (int pass = 0; pass < 2; ++pass) {
    const auto same = [&](const std::string& candidate) {
      return pass == 0 ? ascii_lower(candidate) == key
                       : ascii_lower(without_organisation(candidate)) == without_organisation(key);
    };
    for (const CatalogModel& m : models_) {
      if (same(m.id)) return ResolvedModel{&m, std::nullopt, ""};
      for (const std::string& a : m.aliases) {
        // An alias is another checkpoint of the same architecture: said, not silently renamed.
        if (same(a)) {
          return ResolvedModel{
              &m, std::nullopt,
              fmt::format("'{}' taken as {} (the same architecture; the catalog's entry for both)",
                          name, m.id)};
        }
      }
      for (const auto& [id, format] : m.format_variants) {
        if (same(id)) return ResolvedModel{&m, format, ""};
      }
    }
  }
  // 3. The same name once the suffixes of derived checkpoints are set aside. Where several
  // entries share it (Qwen3-30B-A3B and its -Instruct-2507 release, whose context differs), the
  // one whose name shares the longest beginning with the name asked for.
  std::string format;
  const std::string wanted = canonical(name, &format);
  const std::string asked = without_organisation(key);
  const CatalogModel* best = nullptr;
  std::size_t best_shared = 0;
  for (const CatalogModel& m : models_) {
    std::vector<std::string> names = m.aliases;
    names.insert(names.begin(), m.id);
    for (const std::string& n : names) {
      if (canonical(n, nullptr) != wanted) continue;
      const std::string candidate = ascii_lower(without_organisation(n));
      const auto [a, b] =
          std::mismatch(asked.begin(), asked.end(), candidate.begin(), candidate.end());
      const auto shared = static_cast<std::size_t>(a - asked.begin());
      if (best == nullptr || shared > best_shared) {
        best = &m;
        best_shared = shared;
      }
    }
  }
  if (best == nullptr) return std::nullopt;
  ResolvedModel r{best, format.empty() ? std::nullopt : std::optional<std::string>(format), ""};
  r.note = fmt::format("'{}' taken as {} (the same architecture{})", name, best->id,
                       format.empty() ? "" : fmt::format("; {} weights, as its name says", format));
  return r;
}

ResolvedModel ModelCatalog::find(const std::string& name, const std::string& setting) const {
  if (auto r = resolve(name)) return *r;
  std::vector<std::string> ids;
  std::vector<std::string> compared;
  for (const CatalogModel& m : models_) {
    ids.push_back(m.id);
    compared.push_back(ascii_lower(m.id));
  }
  std::string hint;
  if (auto i = nearest_index(ascii_lower(name), compared)) {
    hint = fmt::format("did you mean '{}'? ", ids[*i]);
  } else {
    // The nearest by the name without organisation and suffixes.
    std::vector<std::string> short_names;
    for (const CatalogModel& m : models_) short_names.push_back(canonical(m.id, nullptr));
    if (auto j = nearest_index(canonical(name, nullptr), short_names))
      hint = fmt::format("did you mean '{}'? ", ids[*j]);
  }
  throw InvalidInput(fmt::format(
      "{}: '{}' is not a model of nnergy's catalog and not a config.json file; {}`nnergy serve "
      "--list-models` lists the {} models; any other decoder can be given as the path of its "
      "Hugging Face config.json",
      setting, name, hint, models_.size()));
}

}  // namespace nnergy::llm
