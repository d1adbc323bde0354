#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nnergy/account/account_run.h"
#include "nnergy/account/accounting_precision.h"
#include "nnergy/account/energy_sweep.h"
#include "nnergy/account/footprint.h"
#include "nnergy/core/run_context.h"
#include "nnergy/core/setting_name.h"

namespace nnergy::report {

/// One run accounted (seed 001): its aligned inputs, where its energy went, and its footprints.
struct AccountedRun {
  account::AccountRun run;  ///< warnings include devices that have events but no power
  account::Accounting accounting;
  account::Footprint tef;   ///< tensor energy footprint (seed 001 Def. 3.4)
  account::Footprint stef;  ///< the TEF summarized with the report's rules (Def. 3.5)
  /// ASSS: the STEF with the power decimated by 2..max_factor; empty unless assessed.
  std::vector<account::SparsingPoint> sparsing;
};

/// Accounting precision across runs (seed 001 §5.4), when assessed.
struct AccountingAssessment {
  /// ASSW: element k−2 correlates run 1 with runs 1..k merged; empty with one run.
  std::vector<double> widening;
  /// Similarity of every pair of runs' STEFs; empty with one run. NaN: undefined.
  std::vector<std::vector<double>> pairwise;
};

/// What `nnergy account` found over one or more runs.
struct AccountingReport {
  /// "run" (or "runs"), "alignment" and, with one run, "base_epoch_s" after the usual fields.
  RunContext context;
  bool interpolate = false;                   ///< power interpolated between samples (else recency)
  std::vector<account::SummarizeRule> rules;  ///< in the order applied
  std::vector<AccountedRun> runs;
  std::optional<AccountingAssessment> assessment;
};

/// True when the run has events but none of their devices has power samples: every attributed
/// energy is then 0 J.
bool has_no_power(const AccountedRun& run);

/// How the text report lists rows.
struct AccountingTextOptions {
  std::size_t level = 2;  ///< EDD levels below the total
  /// Rows of each table: the EDD's largest nodes (their parents always shown) and the hotspots;
  /// 0: all. Left-out rows are counted under the table.
  std::size_t top = 25;
  /// How the line about left-out rows names the `top` setting.
  SettingNames names = SettingNames::kFlag;
};

/// Human-readable report, per run: inputs and alignment, the energy distribution diagram,
/// energy and power hotspots, passes, conservation per device and warnings (a run without any
/// power says so instead of listing 0 J); then the assessment. Energies, times and powers with
/// SI prefixes (quantity_format.h).
std::string render_text(const AccountingReport& report, const AccountingTextOptions& options);

/// The report as JSON text (`nnergy account --json`). One run: its accounting document
/// (account::accounting_json, which `account compare` reads back), with "sparsing" ([{"factor",
/// "similarity"}]) when assessed. Several runs: {"context", "runs": [one document each],
/// "assessment": {"widening", "pairwise"}} (an undefined similarity is null).
nlohmann::ordered_json to_json(const AccountingReport& report);

/// Accounting similarity of two footprints (`nnergy account compare`).
struct FootprintComparison {
  std::size_t first_names = 0;  ///< names in the first footprint
  std::size_t second_names = 0;
  double similarity = 0;  ///< Pearson correlation of the attributed energies
};

/// One line: the similarity and the names compared.
std::string render_text(const FootprintComparison& comparison);

}  // namespace nnergy::report
