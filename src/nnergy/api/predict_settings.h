#pragma once

#include "nnergy/api/predict.h"
#include "nnergy/api/request_setting.h"

namespace nnergy::api {

/// Every setting of a PredictRequest but the model, declared once (request_setting.h): the
/// `nnergy predict` options, nnergy.predict's keyword arguments and their help are made from it.
const SettingTable<PredictRequest>& predict_settings();

/// Stores `value` for the setting `keyword` into `request` (check_setting_type, then the
/// setting's apply). Throws InvalidInput for an unknown keyword (naming the accepted ones) or a
/// value of another type or out of its vocabulary, naming the setting as `request.names` spells
/// it.
void apply_predict_setting(PredictRequest& request, std::string_view keyword,
                           const SettingValue& value);

}  // namespace nnergy::api
