#pragma once

// The embedded catalog of language models (data/llm/models.json): Hugging Face ids and the
// architectures their config.json files describe, and how a name a user types finds one.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/llm/architecture.h"

namespace nnergy::llm {

/// One model of the catalog.
struct CatalogModel {
  std::string id;  ///< Hugging Face id, e.g. "meta-llama/Llama-3.1-8B-Instruct"
  std::vector<std::string> aliases;
  std::string family;        ///< e.g. "Llama 3.1"
  std::string release_date;  ///< ISO date
  /// Hugging Face ids of checkpoints of the same architecture in another weight format, and
  /// that format ("meta-llama/Llama-3.1-405B-Instruct-FP8" → "fp8").
  std::vector<std::pair<std::string, std::string>> format_variants;
  Architecture architecture;  ///< id, source and published counts filled in
};

/// A name resolved to a catalog model, with what the name itself says.
struct ResolvedModel {
  const CatalogModel* model = nullptr;
  /// The weight format the name asks for ("-FP8", "-AWQ", "-MXFP4", a format variant's id), if
  /// any; else the checkpoint's.
  std::optional<std::string> weight_format;
  /// How the name was matched, when not exactly: e.g. "'llama-3.1-8b' taken as
  /// meta-llama/Llama-3.1-8B-Instruct (the same architecture)".
  std::string note;
};

class ModelCatalog {
 public:
  /// Reads `path` (data/llm/models.json). Throws InvalidInput naming the file and the entry
  /// for a malformed catalog (an entry's config is read by read_config).
  static ModelCatalog load(const std::filesystem::path& path);
  /// The catalog of the data directory.
  static ModelCatalog load_default();

  const std::vector<CatalogModel>& models() const { return models_; }

  /// Finds `name`: a Hugging Face id or alias (case-insensitive, with or without the
  /// organisation), and the usual suffixes of derived checkpoints: "-Instruct", "-Chat", "-it",
  /// "-hf", a release date ("-2507", "-2407"), a version ("-v0.3") and a weight format ("-FP8",
  /// "-AWQ", "-GPTQ", "-MXFP4", "-NVFP4", "-INT4", "-W8A8", "-FP4"), which also sets the weight
  /// format. nullopt when nothing matches.
  std::optional<ResolvedModel> resolve(const std::string& name) const;
  /// resolve(), or InvalidInput naming `setting` with the nearest ids ("did you mean") and how
  /// to list them or give a config.json instead.
  ResolvedModel find(const std::string& name, const std::string& setting) const;

 private:
  std::vector<CatalogModel> models_;
  std::string source_;
};

}  // namespace nnergy::llm
