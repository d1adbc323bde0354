#include "nnergy/regress/xgboost_regressor.h"

#include <fmt/format.h>
#include <simdjson.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>

#include "nnergy/core/base64.h"
#include "nnergy/core/error.h"
#include "nnergy/core/json_document.h"
#include "nnergy/regress/regressor_checks.h"

namespace nnergy::regress {

namespace {

using nlohmann::json;

// One thread by default: the datasets are ~10³ rows, and XGBoost's OpenMP threads busy-wait at
// every barrier, which on a machine whose cores are all busy made two threads ~25× slower than
// one in our measurements (GCC's libgomp with the default OMP_WAIT_POLICY).
constexpr int kDefaultThreads = 1;
constexpr std::size_t kMinRows = 2;
// The forest's mean of per-tree predictions must equal XGBoost's own prediction to float
// accuracy (sums of a few hundred float leaf values); more means the model was misread.
constexpr double kForestSelfCheckTolerance = 1e-3;

void check(int rc, const char* call) {
  if (rc != 0) {
    throw InternalError(fmt::format("XGBoost {} failed: {}", call, XGBGetLastError()));
  }
}

// Owns a DMatrixHandle.
class DMatrix {
 public:
  // Rows of `x` as float, NaN = missing; `labels` and `weights` when not empty.
  DMatrix(const features::FeatureMatrix& x, std::span<const double> labels,
          std::span<const double> weights) {
    const std::vector<float> values(x.values.begin(), x.values.end());
    check(XGDMatrixCreateFromMat(values.data(), x.rows(), x.columns(), NAN, &handle_),
          "XGDMatrixCreateFromMat");
    set_float_info("label", labels);
    set_float_info("weight", weights);
  }
  ~DMatrix() {
    if (handle_ != nullptr) XGDMatrixFree(handle_);
  }
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;

  DMatrixHandle get() const { return handle_; }

 private:
  void set_float_info(const char* field, std::span<const double> values) {
    if (values.empty()) return;
    const std::vector<float> as_float(values.begin(), values.end());
    check(XGDMatrixSetFloatInfo(handle_, field, as_float.data(), as_float.size()),
          "XGDMatrixSetFloatInfo");
  }

  DMatrixHandle handle_ = nullptr;
};

// Owns a BoosterHandle.
class Booster {
 public:
  Booster() { check(XGBoosterCreate(nullptr, 0, &handle_), "XGBoosterCreate"); }
  explicit Booster(const DMatrix& train) {
    const DMatrixHandle matrices[] = {train.get()};
    check(XGBoosterCreate(matrices, 1, &handle_), "XGBoosterCreate");
  }
  ~Booster() {
    if (handle_ != nullptr) XGBoosterFree(handle_);
  }
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;

  void set(const std::string& key, const std::string& value) {
    check(XGBoosterSetParam(handle_, key.c_str(), value.c_str()), "XGBoosterSetParam");
  }

  // The XGBoost JSON model, as text.
  std::string to_text() const {
    bst_ulong length = 0;
    const char* data = nullptr;
    check(XGBoosterSaveModelToBuffer(handle_, R"({"format": "json"})", &length, &data),
          "XGBoosterSaveModelToBuffer");
    return {data, data + length};
  }

  // The model in XGBoost's UBJSON (binary JSON) format: it loads ~10× faster than the JSON text.
  std::string to_ubj() const {
    bst_ulong length = 0;
    const char* data = nullptr;
    check(XGBoosterSaveModelToBuffer(handle_, R"({"format": "ubj"})", &length, &data),
          "XGBoosterSaveModelToBuffer");
    return {data, data + length};
  }

  // Margins (log-space predictions) of every row, and with `leaves` the leaf index of every
  // (row, tree), row-major.
  std::vector<float> predict(const DMatrix& x, bool leaves) const {
    const char* config = leaves ? R"({"type": 6, "training": false, "iteration_begin": 0,
                                     "iteration_end": 0, "strict_shape": false})"
                                : R"({"type": 1, "training": false, "iteration_begin": 0,
                                     "iteration_end": 0, "strict_shape": false})";
    const bst_ulong* shape = nullptr;
    bst_ulong dim = 0;
    const float* result = nullptr;
    check(XGBoosterPredictFromDMatrix(handle_, x.get(), config, &shape, &dim, &result),
          "XGBoosterPredictFromDMatrix");
    bst_ulong size = 1;
    for (bst_ulong i = 0; i < dim; ++i) size *= shape[i];
    return {result, result + size};
  }

  BoosterHandle get() const { return handle_; }

 private:
  BoosterHandle handle_ = nullptr;
};

// FNV-1a 64-bit digest of a saved model, in hex: XGBoost reads a truncated or altered UBJSON
// buffer past its end (undefined behaviour, a crash at best), so a model file carries the digest
// of each buffer and load() checks it before XGBoost sees the bytes. Written by hand: five lines,
// and no checksum library is among the dependencies.
std::string model_digest(const std::string& bytes) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ULL;
  return fmt::format("{:016x}", h);
}

// What a saved XGBoost model's bytes are, before XGBoost sees them.
struct SavedModelCheck {
  std::string malformed;     ///< why the bytes are not well-formed UBJSON; empty when they are
  std::string inconsistent;  ///< why its trees are not ones XGBoost can load safely; or empty
};

// Walks UBJSON without building it, to learn whether it is well formed and whether its trees are
// consistent. libxgboost 1.7 reads a malformed UBJSON buffer past its end (UBJReader::ParseArray,
// found by fuzz/model_file), so nnergy hands XGBoost only bytes that nlohmann's bounds-checked
// UBJSON parser walked to the end. A container may not announce more elements than the buffer has
// bytes: XGBoost never writes one, and a count of no-payload elements would otherwise have the
// walk loop for 2^63 of them. XGBoost 1.7 also trusts a tree's node count and node indices (a
// parent index past the last node made RegTree::LoadModel read out of bounds, found by
// fuzz/model_file), so every tree is checked as nnergy writes them (check_tree): per-node arrays
// of the node count, child and parent indices inside the tree, split features inside the model's,
// no categorical splits, and a tree list as long as its count and tree_info. The walk keeps only
// the sizes and integer indices those checks need, one object at a time: building the model as a
// JSON document first cost more than XGBoost's own load.
class UbjsonWalk : public nlohmann::json_sax<json> {
 public:
  UbjsonWalk(std::size_t bytes, std::size_t features) : bytes_(bytes), features_(features) {}
  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(number_integer_t v) override { return scalar(v); }
  bool number_unsigned(number_unsigned_t v) override {
    return scalar(v <= static_cast<number_unsigned_t>(std::numeric_limits<std::int64_t>::max())
                      ? std::optional<std::int64_t>(static_cast<std::int64_t>(v))
                      : std::nullopt);
  }
  bool number_float(number_float_t, const string_t&) override { return scalar(); }
  bool string(string_t& value) override { return scalar(std::nullopt, &value); }
  bool binary(binary_t&) override { return scalar(); }
  bool start_object(std::size_t elements) override { return open(elements, true); }
  bool key(string_t& name) override {
    frames_.back().key = name;
    return true;
  }
  bool end_object() override {
    Frame& object = frames_.back();
    if (inconsistent_.empty()) inconsistent_ = object_problem(object);
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t elements) override { return open(elements, false); }
  bool end_array() override {
    const Frame array = std::move(frames_.back());
    frames_.pop_back();
    if (Frame* parent = parent_object()) parent->sizes[array.name] = array.count;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error_ = e.what();
    return false;
  }
  const std::string& error() const { return error_; }
  const std::string& inconsistent() const { return inconsistent_; }

 private:
  // An open object or array. An object keeps its current key, the sizes of its arrays, the values
  // of the integer arrays a tree is checked by, and the counts its *_param child gives as text.
  struct Frame {
    bool object = false;
    std::string name;  // the key it is the value of; empty in an array
    std::string key;
    std::size_t count = 0;
    std::map<std::string, std::size_t> sizes;
    std::map<std::string, std::vector<std::optional<std::int64_t>>> indices;
    std::map<std::string, std::string> params;
  };

  static bool is_index_array(const std::string& name) {
    return name == "left_children" || name == "right_children" || name == "parents" ||
           name == "split_indices" || name == "split_type";
  }

  Frame* parent_object() {
    return !frames_.empty() && frames_.back().object ? &frames_.back() : nullptr;
  }

  bool open(std::size_t elements, bool object) {
    if (!fits(elements)) return false;
    // nlohmann's UBJSON reader recurses once per level (as does XGBoost's): refusing here, before
    // it reads the container's elements, keeps a deeply nested model from overflowing the stack.
    if (frames_.size() >= core::kMaxJsonDepth) {
      error_ = fmt::format("containers nested deeper than {} levels", core::kMaxJsonDepth);
      return false;
    }
    Frame frame;
    frame.object = object;
    if (Frame* parent = parent_object()) {
      frame.name = parent->key;
      // A repeated key's array replaces the earlier one, for its values as for its size.
      if (!object && is_index_array(frame.name)) parent->indices[frame.name].clear();
    }
    scalar();  // counts as an element of an enclosing array
    frames_.push_back(std::move(frame));
    return true;
  }

  // A value: counted in an array, kept where a check needs it.
  bool scalar(std::optional<std::int64_t> integer = std::nullopt,
              const std::string* text = nullptr) {
    if (frames_.empty()) return true;
    Frame& top = frames_.back();
    if (!top.object) {
      ++top.count;
      if (frames_.size() >= 2 && is_index_array(top.name)) {
        Frame& owner = frames_[frames_.size() - 2];
        if (owner.object) owner.indices[top.name].push_back(integer);
      }
      return true;
    }
    if (text != nullptr && (top.name == "tree_param" || top.name == "gbtree_model_param") &&
        frames_.size() >= 2) {
      frames_[frames_.size() - 2].params[top.key] = *text;
    }
    return true;
  }

  bool fits(std::size_t elements) {
    if (elements == static_cast<std::size_t>(-1) || elements <= bytes_) return true;
    error_ = fmt::format("a container of {} elements in {} bytes", elements, bytes_);
    return false;
  }

  std::string object_problem(const Frame& object) const {
    if (auto it = object.params.find("num_trees"); it != object.params.end()) {
      const auto trees = object.sizes.find("trees");
      const auto info = object.sizes.find("tree_info");
      if (trees == object.sizes.end() || info == object.sizes.end() ||
          it->second != std::to_string(trees->second) || info->second != trees->second) {
        return "its tree count, tree list and tree_info disagree";
      }
    }
    if (object.name == "tree_param" || object.name == "gbtree_model_param") return {};
    return object.params.count("num_nodes") != 0 || object.sizes.count("parents") != 0
               ? tree_problem(object)
               : std::string();
  }

  std::string tree_problem(const Frame& tree) const {
    const auto number = [&](const char* key) -> std::optional<std::int64_t> {
      const auto it = tree.params.find(key);
      if (it == tree.params.end()) return {};
      std::int64_t v = 0;
      const char* end = it->second.data() + it->second.size();
      const auto [stop, ec] = std::from_chars(it->second.data(), end, v);
      if (ec != std::errc() || stop != end) return {};
      return v;
    };
    const std::optional<std::int64_t> nodes = number("num_nodes");
    if (!nodes || *nodes < 1 || *nodes > std::numeric_limits<std::int32_t>::max() ||
        number("size_leaf_vector").value_or(-1) != 0) {
      return "a tree without a valid node count or with leaf vectors";
    }
    const auto n = static_cast<std::size_t>(*nodes);
    for (const char* key :
         {"loss_changes", "sum_hessian", "base_weights", "left_children", "right_children",
          "parents", "split_indices", "split_conditions", "split_type", "default_left"}) {
      const auto it = tree.sizes.find(key);
      if (it == tree.sizes.end() || it->second != n) {
        return fmt::format("a tree of {} nodes whose \"{}\" does not hold {} values", n, key, n);
      }
    }
    for (const char* key :
         {"categories", "categories_nodes", "categories_segments", "categories_sizes"}) {
      if (const auto it = tree.sizes.find(key); it != tree.sizes.end() && it->second != 0) {
        return "a tree with categorical splits";
      }
    }
    // The root's parent is XGBoost's invalid node id without its left-child bit.
    constexpr std::int64_t kRootParent = std::numeric_limits<std::int32_t>::max();
    const auto n_signed = static_cast<std::int64_t>(n);
    const auto feature_count = static_cast<std::int64_t>(std::max<std::size_t>(features_, 1));
    const auto& left = tree.indices.at("left_children");
    const auto& right = tree.indices.at("right_children");
    const auto& parent = tree.indices.at("parents");
    const auto& split = tree.indices.at("split_indices");
    const auto& type = tree.indices.at("split_type");
    for (std::size_t i = 0; i < n; ++i) {
      const bool child_ok = left[i] && right[i] && *left[i] >= -1 && *left[i] < n_signed &&
                            *right[i] >= -1 && *right[i] < n_signed &&
                            (*left[i] == -1) == (*right[i] == -1);
      const bool parent_ok = parent[i] && (i == 0 ? *parent[i] == kRootParent
                                                  : *parent[i] >= 0 && *parent[i] < n_signed);
      if (!child_ok || !parent_ok || !split[i] || *split[i] < 0 || *split[i] >= feature_count ||
          !type[i] || *type[i] != 0) {
        return fmt::format(
            "node {} of a tree of {} nodes has a child, parent or split feature outside the tree "
            "or the model",
            i, n);
      }
    }
    return {};
  }

  std::size_t bytes_;
  std::size_t features_;
  std::vector<Frame> frames_;
  std::string error_;
  std::string inconsistent_;
};

// What the bytes of a saved model are (SavedModelCheck), for a model of `features` features.
SavedModelCheck check_saved_model(const std::string& bytes, std::size_t features) {
  UbjsonWalk walk(bytes.size(), features);
  bool ok = false;
  try {
    ok = json::sax_parse(bytes, &walk, json::input_format_t::ubjson, /*strict=*/true);
  } catch (const json::exception& e) {
    return {e.what(), {}};
  }
  if (!ok) return {walk.error().empty() ? std::string("it ends early") : walk.error(), {}};
  return {{}, walk.inconsistent()};
}

// A booster restored from its saved UBJSON model (base64 text in `model`, with its digest when
// the file has one); InvalidInput when that is not base64, does not match its digest, XGBoost
// rejects it, or it expects another number of features.
std::unique_ptr<Booster> booster_from_saved(const json& model, const json* digest,
                                            std::size_t features, const std::string& regressor,
                                            const char* field) {
  const std::optional<std::string> bytes =
      model.is_string() ? base64::decode(model.get_ref<const std::string&>()) : std::nullopt;
  if (!bytes) {
    throw InvalidInput(fmt::format(
        "{} model: \"{}\" must be a base64 string of an XGBoost UBJSON model, found {}", regressor,
        field, model.is_string() ? "a string that is not base64" : model.type_name()));
  }
  if (digest != nullptr && (!digest->is_string() || *digest != model_digest(*bytes))) {
    throw InvalidInput(fmt::format(
        "{} model: \"{}\" does not match its digest {} (the file is truncated or was altered); "
        "train the model again",
        regressor, field, core::describe_json_value(*digest)));
  }
  const SavedModelCheck saved_check = check_saved_model(*bytes, features);
  if (!saved_check.malformed.empty()) {
    throw InvalidInput(
        fmt::format("{} model: \"{}\" is not well-formed UBJSON ({}); train the model again",
                    regressor, field, saved_check.malformed));
  }
  if (!saved_check.inconsistent.empty()) {
    throw InvalidInput(fmt::format(
        "{} model: \"{}\" is not a consistent XGBoost model ({}); train the model again", regressor,
        field, saved_check.inconsistent));
  }
  auto booster = std::make_unique<Booster>();
  if (XGBoosterLoadModelFromBuffer(booster->get(), bytes->data(), bytes->size()) != 0) {
    throw InvalidInput(fmt::format("{} model: \"{}\" is not a valid XGBoost model: {}", regressor,
                                   field, XGBGetLastError()));
  }
  // XGBoost loads some inconsistent models (a tree count other than the number of trees, found by
  // fuzz/model_file) and fails only when saving them again: one save checks the model as XGBoost
  // holds it, so that such a file is the file's problem, not an internal error later.
  bst_ulong saved_length = 0;
  const char* saved = nullptr;
  if (XGBoosterSaveModelToBuffer(booster->get(), R"({"format": "ubj"})", &saved_length, &saved) !=
      0) {
    throw InvalidInput(
        fmt::format("{} model: \"{}\" is not a consistent XGBoost model: {}; train the model again",
                    regressor, field, XGBGetLastError()));
  }
  bst_ulong model_features = 0;
  check(XGBoosterGetNumFeature(booster->get(), &model_features), "XGBoosterGetNumFeature");
  if (model_features != features) {
    throw InvalidInput(
        fmt::format("{} model: \"{}\" was trained on {} features, the model lists {} feature names",
                    regressor, field, model_features, features));
  }
  return booster;
}

// What the forest's per-tree spread needs from a fitted model: the leaf values of each tree
// (indexed by node id) and the log-space intercept XGBoost stores as float text. Read from the
// model's XGBoost JSON with simdjson (megabytes for a forest); saved next to the model, so that
// loading needs no JSON dump of the model.
struct ForestLeaves {
  std::vector<std::vector<double>> leaf_values;
  double base_score = 0;
};

ForestLeaves read_forest_leaves(const std::string& model_text, const std::string& regressor) {
  ForestLeaves out;
  try {
    simdjson::dom::parser parser;
    const simdjson::dom::element model = parser.parse(model_text);
    const simdjson::dom::array trees = model["learner"]["gradient_booster"]["model"]["trees"];
    for (const simdjson::dom::element tree : trees) {
      std::vector<double>& values = out.leaf_values.emplace_back();
      for (const simdjson::dom::element value : tree["split_conditions"].get_array()) {
        values.push_back(value.get_double());
      }
    }
    const std::string_view base_score =
        model["learner"]["learner_model_param"]["base_score"].get_string();
    out.base_score = std::stod(std::string(base_score));
  } catch (const std::exception& e) {
    throw InternalError(
        fmt::format("{}: cannot read the trees and base score of the fitted XGBoost model: {}",
                    regressor, e.what()));
  }
  return out;
}

double sample_stddev(std::span<const double> values) {
  if (values.size() < 2) return 0;
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / values.size();
  double sum = 0;
  for (const double v : values) sum += (v - mean) * (v - mean);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

std::string number(double value) { return fmt::format("{}", value); }

}  // namespace

struct XgboostRegressor::Settings {
  std::string target = "time_s";
  std::string tree_method = "exact";
  int rounds = 1;
  int num_parallel_tree = 1;
  double eta = 1;
  int max_depth = 6;
  double subsample = 1;
  double colsample_bynode = 1;
  double min_child_weight = 1;
  double lambda = 1;
  int uncertainty_bags = 0;

  static Settings defaults(Kind kind) {
    Settings s;
    s.min_child_weight = 3;
    s.subsample = 0.8;
    if (kind == Kind::kForest) {
      s.num_parallel_tree = 100;
      s.max_depth = 14;
      s.colsample_bynode = 0.8;
      s.lambda = 0;
    } else {
      s.tree_method = "hist";
      s.rounds = 500;
      s.eta = 0.05;
      s.max_depth = 6;
      s.uncertainty_bags = 5;
    }
    return s;
  }

  static std::vector<std::string> keys(Kind kind) {
    std::vector<std::string> out = {"target",    "tree_method",      "max_depth",
                                    "subsample", "colsample_bynode", "min_child_weight",
                                    "lambda"};
    if (kind == Kind::kForest) {
      out.push_back("num_parallel_tree");
    } else {
      out.insert(out.end(), {"rounds", "eta", "uncertainty_bags"});
    }
    return out;
  }

  // The defaults of `kind` with the values of `extra`; InvalidInput for a value out of range.
  static Settings parse(Kind kind, const std::string& regressor, const json& extra) {
    check_setting_names(regressor, extra, keys(kind));
    Settings s = defaults(kind);
    s.target = target_setting(regressor, extra);
    if (const auto it = extra.find("tree_method"); it != extra.end()) {
      if (!it->is_string() || (*it != "exact" && *it != "hist" && *it != "approx")) {
        throw InvalidInput(fmt::format(
            "{}: setting 'tree_method' must be \"exact\", \"hist\" or \"approx\", found {}",
            regressor, core::describe_json_value(*it)));
      }
      s.tree_method = it->get<std::string>();
    }
    const auto integer = [&](const char* key, int& value, int min, int max) {
      const auto it = extra.find(key);
      if (it == extra.end()) return;
      if (!it->is_number_integer() || *it < min || *it > max) {
        throw InvalidInput(fmt::format("{}: setting '{}' must be an integer in [{}, {}], found {}",
                                       regressor, key, min, max, core::describe_json_value(*it)));
      }
      value = it->get<int>();
    };
    const auto real = [&](const char* key, double& value, double min, double max,
                          bool min_inclusive) {
      const auto it = extra.find(key);
      if (it == extra.end()) return;
      const bool ok = it->is_number() && (min_inclusive ? *it >= min : *it > min) && *it <= max;
      if (!ok) {
        throw InvalidInput(fmt::format("{}: setting '{}' must be a number in {}{}, {}], found {}",
                                       regressor, key, min_inclusive ? "[" : "(", min, max,
                                       core::describe_json_value(*it)));
      }
      value = it->get<double>();
    };
    integer("max_depth", s.max_depth, 1, 64);
    real("subsample", s.subsample, 0, 1, false);
    real("colsample_bynode", s.colsample_bynode, 0, 1, false);
    real("min_child_weight", s.min_child_weight, 0, 1e9, true);
    real("lambda", s.lambda, 0, 1e9, true);
    integer("num_parallel_tree", s.num_parallel_tree, 1, 100000);
    integer("rounds", s.rounds, 1, 100000);
    real("eta", s.eta, 0, 1, false);
    integer("uncertainty_bags", s.uncertainty_bags, 0, 1000);
    if (s.uncertainty_bags == 1) {
      throw InvalidInput(fmt::format(
          "{}: setting 'uncertainty_bags' must be 0 (no uncertainty) or at least 2, found 1",
          regressor));
    }
    return s;
  }

  json to_json(Kind kind) const {
    json out = {{"target", target},
                {"tree_method", tree_method},
                {"max_depth", max_depth},
                {"subsample", subsample},
                {"colsample_bynode", colsample_bynode},
                {"min_child_weight", min_child_weight},
                {"lambda", lambda}};
    if (kind == Kind::kForest) {
      out["num_parallel_tree"] = num_parallel_tree;
    } else {
      out["rounds"] = rounds;
      out["eta"] = eta;
      out["uncertainty_bags"] = uncertainty_bags;
    }
    return out;
  }
};

struct XgboostRegressor::Model {
  std::unique_ptr<Booster> main;                 ///< fitted on all rows
  std::vector<std::unique_ptr<Booster>> bagged;  ///< boost: fitted on bootstrap resamples
  std::vector<std::vector<double>> leaf_values;  ///< forest: leaf value by tree and node id
  double base_score = 0;                         ///< forest: log-space intercept of every tree
  mutable std::mutex mutex;                      ///< serializes XGBoost calls
};

XgboostRegressor::XgboostRegressor(Kind kind)
    : kind_(kind), settings_(std::make_unique<Settings>(Settings::defaults(kind))) {}

XgboostRegressor::~XgboostRegressor() = default;
XgboostRegressor::XgboostRegressor(XgboostRegressor&&) noexcept = default;
XgboostRegressor& XgboostRegressor::operator=(XgboostRegressor&&) noexcept = default;

std::string XgboostRegressor::name() const { return kind_ == Kind::kForest ? "forest" : "boost"; }

std::string XgboostRegressor::description() const {
  const Settings& s = *settings_;
  if (kind_ == Kind::kForest) {
    return fmt::format(
        "random forest of {} trees (XGBoost, depth {}) on log {}; uncertainty from the spread "
        "across trees",
        s.num_parallel_tree, s.max_depth, s.target);
  }
  return fmt::format(
      "gradient-boosted trees (XGBoost, {} rounds, eta {}, depth {}) on log {}; uncertainty from "
      "{} bootstrap boosters",
      s.rounds, s.eta, s.max_depth, s.target, s.uncertainty_bags);
}

nlohmann::json XgboostRegressor::settings() const { return settings_->to_json(kind_); }

void XgboostRegressor::fit(const features::FeatureMatrix& x, std::span<const double> y,
                           const FitOptions& options) {
  const std::string regressor = name();
  Settings settings = Settings::parse(kind_, regressor, options.extra);
  check_training_data(regressor, x, y, kMinRows);
  if (options.threads < 0) {
    throw InvalidInput(fmt::format("{}: {} threads", regressor, options.threads));
  }
  const int threads = options.threads == 0 ? kDefaultThreads : options.threads;

  std::vector<double> log_y(y.size());
  std::transform(y.begin(), y.end(), log_y.begin(), [](double v) { return std::log(v); });
  const double base_score =
      std::accumulate(log_y.begin(), log_y.end(), 0.0) / static_cast<double>(log_y.size());

  // XGBoost's seed is a 32-bit integer parameter.
  const auto fit_one = [&](std::span<const double> weights, std::uint64_t seed) {
    const DMatrix train(x, log_y, weights);
    auto booster = std::make_unique<Booster>(train);
    booster->set("booster", "gbtree");
    booster->set("objective", "reg:squarederror");
    booster->set("tree_method", settings.tree_method);
    booster->set("verbosity", "0");
    booster->set("nthread", std::to_string(threads));
    booster->set("seed", std::to_string(seed % 2147483647U));
    booster->set("base_score", number(base_score));
    booster->set("eta", number(settings.eta));
    booster->set("max_depth", std::to_string(settings.max_depth));
    booster->set("subsample", number(settings.subsample));
    booster->set("colsample_bynode", number(settings.colsample_bynode));
    booster->set("min_child_weight", number(settings.min_child_weight));
    booster->set("lambda", number(settings.lambda));
    booster->set("num_parallel_tree", std::to_string(settings.num_parallel_tree));
    for (int round = 0; round < settings.rounds; ++round) {
      check(XGBoosterUpdateOneIter(booster->get(), round, train.get()), "XGBoosterUpdateOneIter");
    }
    return booster;
  };

  auto model = std::make_unique<Model>();
  model->main = fit_one({}, options.seed);
  if (kind_ == Kind::kForest) {
    ForestLeaves leaves = read_forest_leaves(model->main->to_text(), regressor);
    model->leaf_values = std::move(leaves.leaf_values);
    model->base_score = leaves.base_score;
  }
  // Bootstrap resamples as instance weights: row i drawn w_i times out of n draws.
  std::mt19937_64 random(options.seed);
  std::uniform_int_distribution<std::size_t> draw(0, y.size() - 1);
  for (int bag = 0; bag < settings.uncertainty_bags; ++bag) {
    std::vector<double> weights(y.size(), 0.0);
    for (std::size_t i = 0; i < y.size(); ++i) weights[draw(random)] += 1;
    model->bagged.push_back(fit_one(weights, options.seed + 1 + static_cast<std::uint64_t>(bag)));
  }

  feature_names_ = x.names;
  *settings_ = std::move(settings);
  model_ = std::move(model);
}

std::vector<Prediction> XgboostRegressor::predict(const features::FeatureMatrix& x) const {
  if (!model_) {
    throw InternalError(fmt::format("{} regressor: predict() before fit() or load()", name()));
  }
  check_feature_names(name(), feature_names_, x);
  std::vector<Prediction> out(x.rows());
  if (x.rows() == 0) return out;

  const DMatrix data(x, {}, {});
  std::vector<float> margin;
  std::vector<float> leaves;
  std::vector<std::vector<float>> bag_margins;
  {
    const std::lock_guard lock(model_->mutex);
    margin = model_->main->predict(data, false);
    if (kind_ == Kind::kForest) leaves = model_->main->predict(data, true);
    for (const auto& bag : model_->bagged) bag_margins.push_back(bag->predict(data, false));
  }
  if (margin.size() != x.rows()) {
    throw InternalError(
        fmt::format("XGBoost gave {} predictions for {} rows", margin.size(), x.rows()));
  }

  const std::size_t trees = model_->leaf_values.size();
  if (kind_ == Kind::kForest && leaves.size() != x.rows() * trees) {
    throw InternalError(fmt::format("XGBoost gave {} leaf indices for {} rows x {} trees",
                                    leaves.size(), x.rows(), trees));
  }
  std::vector<double> spread(kind_ == Kind::kForest ? trees : bag_margins.size());
  for (std::size_t i = 0; i < x.rows(); ++i) {
    const double z = margin[i];
    double sigma_z = 0;
    if (kind_ == Kind::kForest) {
      // Random-forest mode scales each tree's leaves by 1/num_parallel_tree, so one tree's own
      // estimate is base + trees·leaf and the forest's is their mean.
      for (std::size_t t = 0; t < trees; ++t) {
        const auto node = static_cast<std::size_t>(leaves[i * trees + t]);
        const std::vector<double>& values = model_->leaf_values[t];
        if (node >= values.size()) {
          throw InvalidInput(fmt::format(
              "forest model: \"tree_leaf_values\" of tree {} has no node {} (XGBoost's leaf): "
              "they do not belong to this XGBoost model",
              t, node));
        }
        spread[t] = model_->base_score + static_cast<double>(trees) * values[node];
      }
      const double mean = std::accumulate(spread.begin(), spread.end(), 0.0) / trees;
      if (std::abs(mean - z) > kForestSelfCheckTolerance * std::max(1.0, std::abs(z))) {
        throw InvalidInput(fmt::format(
            "forest model: the mean of the per-tree predictions from \"tree_leaf_values\" and "
            "\"base_score\", {}, differs from XGBoost's own prediction {}: they do not belong to "
            "this XGBoost model",
            mean, z));
      }
      sigma_z = sample_stddev(spread);
    } else if (!bag_margins.empty()) {
      for (std::size_t b = 0; b < bag_margins.size(); ++b) spread[b] = bag_margins[b][i];
      sigma_z = sample_stddev(spread);
    }
    const double value = std::exp(z);
    out[i] = {value, value * sigma_z};
  }
  return out;
}

nlohmann::json XgboostRegressor::save() const {
  if (!model_) {
    throw InternalError(fmt::format("{} regressor: save() before fit() or load()", name()));
  }
  json model = saved_model_header(name(), feature_names_);
  model["settings"] = settings();
  const std::lock_guard lock(model_->mutex);
  const std::string main = model_->main->to_ubj();
  model["xgboost_model_ubj_base64"] = base64::encode(main);
  model["xgboost_model_fnv1a64"] = model_digest(main);
  if (kind_ == Kind::kForest) {
    model["tree_leaf_values"] = model_->leaf_values;
    model["base_score"] = model_->base_score;
  } else {
    json bags = json::array();
    json digests = json::array();
    for (const auto& bag : model_->bagged) {
      const std::string bytes = bag->to_ubj();
      bags.push_back(base64::encode(bytes));
      digests.push_back(model_digest(bytes));
    }
    model["bagged_models_ubj_base64"] = std::move(bags);
    model["bagged_models_fnv1a64"] = std::move(digests);
  }
  return model;
}

void XgboostRegressor::load(const nlohmann::json& saved) {
  const std::string regressor = name();
  std::vector<std::string> names = read_saved_model_header(regressor, saved);
  Settings settings = Settings::parse(kind_, regressor, saved_field(regressor, saved, "settings"));
  // Every saved setting must be present: a model written with other defaults stays that model.
  if (saved_field(regressor, saved, "settings").size() != Settings::keys(kind_).size()) {
    throw InvalidInput(fmt::format("{} model: \"settings\" must list {}", regressor,
                                   join_with_commas(Settings::keys(kind_))));
  }

  auto model = std::make_unique<Model>();
  // Files written before the digests existed have none: they load unchecked.
  const auto digest_of = [&saved](const char* key) {
    return saved.contains(key) ? &saved.at(key) : nullptr;
  };
  model->main = booster_from_saved(saved_field(regressor, saved, "xgboost_model_ubj_base64"),
                                   digest_of("xgboost_model_fnv1a64"), names.size(), regressor,
                                   "xgboost_model_ubj_base64");
  model->main->set("nthread", std::to_string(kDefaultThreads));
  if (kind_ == Kind::kForest) {
    const json& leaves = saved_field(regressor, saved, "tree_leaf_values");
    const json& base_score = saved_field(regressor, saved, "base_score");
    try {
      model->leaf_values = leaves.get<std::vector<std::vector<double>>>();
    } catch (const json::exception&) {
      throw InvalidInput(fmt::format(
          "{} model: \"tree_leaf_values\" must be an array of number arrays, one per tree",
          regressor));
    }
    if (model->leaf_values.size() != static_cast<std::size_t>(settings.num_parallel_tree)) {
      throw InvalidInput(fmt::format(
          "{} model: \"tree_leaf_values\" has {} trees, \"settings\" says num_parallel_tree {}",
          regressor, model->leaf_values.size(), settings.num_parallel_tree));
    }
    if (!base_score.is_number() || !std::isfinite(base_score.get<double>())) {
      throw InvalidInput(fmt::format("{} model: \"base_score\" must be a finite number, found {}",
                                     regressor, core::describe_json_value(base_score)));
    }
    model->base_score = base_score.get<double>();
  } else {
    const json& bags = saved_field(regressor, saved, "bagged_models_ubj_base64");
    if (!bags.is_array() || bags.size() != static_cast<std::size_t>(settings.uncertainty_bags)) {
      throw InvalidInput(
          fmt::format("{} model: \"bagged_models_ubj_base64\" must be an array of {} models",
                      regressor, settings.uncertainty_bags));
    }
    const json* digests = digest_of("bagged_models_fnv1a64");
    if (digests != nullptr && (!digests->is_array() || digests->size() != bags.size())) {
      throw InvalidInput(
          fmt::format("{} model: \"bagged_models_fnv1a64\" must be an array of {} digests",
                      regressor, bags.size()));
    }
    for (std::size_t b = 0; b < bags.size(); ++b) {
      model->bagged.push_back(booster_from_saved(bags[b], digests ? &(*digests)[b] : nullptr,
                                                 names.size(), regressor,
                                                 "bagged_models_ubj_base64"));
      model->bagged.back()->set("nthread", std::to_string(kDefaultThreads));
    }
  }
  feature_names_ = std::move(names);
  *settings_ = std::move(settings);
  model_ = std::move(model);
}

std::vector<std::pair<std::string, double>> XgboostRegressor::feature_importance() const {
  if (!model_) return {};
  bst_ulong count = 0;
  const char** features = nullptr;
  bst_ulong dim = 0;
  const bst_ulong* shape = nullptr;
  const float* scores = nullptr;
  std::vector<std::pair<std::string, double>> out;
  {
    const std::lock_guard lock(model_->mutex);
    check(XGBoosterFeatureScore(model_->main->get(), R"({"importance_type": "total_gain"})", &count,
                                &features, &dim, &shape, &scores),
          "XGBoosterFeatureScore");
    // Without feature names XGBoost calls column i "f<i>".
    for (bst_ulong k = 0; k < count; ++k) {
      const std::string feature = features[k];
      std::size_t index = 0;
      try {
        index = std::stoul(feature.substr(1));
      } catch (const std::exception&) {
        throw InternalError("XGBoost feature score for unexpected feature " + feature);
      }
      if (feature.empty() || feature[0] != 'f' || index >= feature_names_.size()) {
        throw InternalError("XGBoost feature score for unexpected feature " + feature);
      }
      out.emplace_back(feature_names_[index], scores[k]);
    }
  }
  double total = 0;
  for (const auto& entry : out) total += entry.second;
  if (!(total > 0)) return {};
  for (auto& entry : out) entry.second /= total;
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace nnergy::regress
