#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nnergy::learn {

/// Parses `--set KEY=VALUE` items into the JSON object given to a regressor as FitOptions::extra
/// (e.g. {"num_parallel_tree": 50, "tree_method": "hist"}). VALUE is read as JSON when it is a
/// JSON number, boolean or quoted string, and as a plain string otherwise, so `max_depth=8`
/// gives 8 and `transform=log` gives "log". Which keys exist is the regressor's business: it
/// rejects unknown keys and bad values itself. Throws InvalidInput naming `flag` and the item
/// for an item without '=', an empty key, or a key given twice.
nlohmann::json parse_regressor_settings(const std::vector<std::string>& items,
                                        const std::string& flag);

/// The FitOptions::extra of the model of `target` ("time_s" or "power_w"): `settings` (an object
/// or null) with "target" set to `target`. Every regressor reads it; the analytical and hybrid
/// ones choose their analytical column by it, so without it a power model would be fitted on the
/// analytical time. A "target" among `settings` is replaced: each model has its own.
nlohmann::json settings_for_target(const nlohmann::json& settings, const std::string& target);

}  // namespace nnergy::learn
