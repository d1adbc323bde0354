#include "nnergy/api/train.h"

#include <fmt/format.h>

#include <chrono>

#include "nnergy/api/regressor_choice.h"
#include "nnergy/core/error.h"
#include "nnergy/learn/model_file.h"
#include "nnergy/learn/training_table.h"

namespace nnergy::api {

report::TrainReport train(const TrainRequest& r) {
  learn::check_output_directory(r.out.string(), setting_name(r.names, "out"));
  detail::check_threads(r.threads, r.names);
  const detail::RegressorChoice regressors(r.regressors);
  regressors.check(r.predictor, r.names);
  const learn::TrainingTable table = detail::training_table(r.db, r.device, r.devices_file);

  learn::TrainSettings settings;
  settings.predictor = r.predictor;
  settings.seed = r.seed;
  settings.threads = r.threads;
  settings.extra = r.settings;
  settings.command_line = r.command_line;
  settings.progress = r.progress;
  const auto start = std::chrono::steady_clock::now();
  const learn::ModelFile model = learn::ModelFile::train(table, regressors.registry(), settings);
  const double train_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  model.save(r.out.string());

  report::TrainReport report;
  report.predictor = r.predictor;
  report.db = r.db;
  report.dataset_digest = table.dataset_digest;
  report.device = table.device_resolution;
  report.rows = table.rows.size();
  report.ops = table.signatures().size();
  report.dropped_rows = table.dropped_rows;
  report.error_rows = table.error_rows;
  report.dropped_power = table.dropped_power;
  report.feature_columns = table.features.columns();
  report.time = {table.rows_with(learn::Target::kTime).size(), model.time().metrics};
  if (model.power() != nullptr) {
    report.power = report::TrainedTarget{table.rows_with(learn::Target::kPower).size(),
                                         model.power()->metrics};
  }
  report.train_s = train_s;
  report.model_file = r.out;
  report.model_file_bytes = std::filesystem::file_size(r.out);
  return report;
}

}  // namespace nnergy::api
