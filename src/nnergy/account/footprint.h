#pragma once

#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "nnergy/account/energy_sweep.h"
#include "nnergy/account/trace_event.h"

namespace nnergy::account {

/// One entry of a footprint: a (summarized) qualified tensor name and what it received.
struct FootprintEntry {
  std::string name;              ///< qualified name "Scope.path/op" (TEF) or summarized (STEF)
  double energy_j = 0;           ///< attributed energy, J
  double time_s = 0;             ///< exclusive wall time, s
  double unmeasured_time_s = 0;  ///< exclusive time with no power known, s
  double forward_energy_j = 0;
  double backward_energy_j = 0;
  double other_energy_j = 0;
  double cpu_energy_j = 0;  ///< part from the CPU's power
  double gpu_energy_j = 0;  ///< part from GPUs' power
  std::size_t event_count = 0;
  /// Power footprint (STPF for a summarized footprint): energy / time, W; 0 when time is 0.
  double power_w() const { return time_s > 0 ? energy_j / time_s : 0; }
};

/// A flat footprint, sorted by name (names unique).
using Footprint = std::vector<FootprintEntry>;

/// The tensor energy footprint (seed 001 Def. 3.4, Algorithm 2 `Aggregate`): each qualified
/// name's energy summed over its events. `accounting` must come from `events`.
Footprint tensor_energy_footprint(const std::vector<TraceEvent>& events,
                                  const Accounting& accounting);

/// A summarization rule `regex=replacement` (ECMAScript regex, $1-style back-references),
/// applied with regex_replace to every qualified name.
struct SummarizeRule {
  std::string text;  ///< as given
  std::regex pattern;
  std::string replacement;
};

/// Parses "REGEX=REPLACEMENT" (split at the last '='). Throws InvalidInput naming `flag` and the
/// rule for a missing '=' or an invalid regex.
SummarizeRule parse_summarize_rule(const std::string& rule, const std::string& flag);

/// The default rules for self-similar layers (seed 001 §3.3 "Summarized TEF"): layer_N →
/// layer_*, layers.N → layers.*, blocks.N → blocks.*, h.N → h.*, layerN.M → layerN.*,
/// ProfilerStep#N → ProfilerStep#*.
std::vector<SummarizeRule> default_summarize_rules();

/// The summarized footprint (seed 001 Def. 3.5, T2A): entries whose names the rules map to the
/// same summarized name are summed. Its power_w() is the STPF.
Footprint summarize(const Footprint& footprint, const std::vector<SummarizeRule>& rules);

/// Concatenates footprints of several runs into one (ASSW "widening": runs merged).
Footprint merge_footprints(const std::vector<Footprint>& footprints);

/// Accounting similarity (seed 001 §5.4.1): Pearson correlation of the energies of two
/// footprints over the union of their names (a name missing from one counts 0 J there). Throws
/// InvalidInput when fewer than 2 names or a footprint's energies are constant.
double accounting_similarity(const Footprint& a, const Footprint& b);

/// The deepest the EDD nests below its root, in levels: a name of more components (name_depth)
/// keeps everything from its 64th component on as one last level. Real module paths nest a few
/// dozen levels at most; a trace event named with 100,000 '/' would otherwise give a tree that
/// deep, whose recursive walks overflow the stack and whose indented JSON grows quadratically.
inline constexpr std::size_t kMaxEddDepth = 64;

/// How many components `qualified_name` has as name_path splits it, without the cap: split at
/// '/', and the scope (all but the last component) also at '.', empty scope pieces left out.
std::size_t name_depth(std::string_view qualified_name);

/// The components of a qualified name as the EDD nests them: split at '/', and the scope (all
/// but the last component) also at '.' (PyTorch module paths "layer1.0.conv1"), empty scope
/// pieces left out. At most kMaxEddDepth components: the last one of a deeper name is the rest of
/// the name from its kMaxEddDepth-th component on, separators included.
std::vector<std::string> name_path(const std::string& qualified_name);

/// A node of the energy distribution diagram (seed 001 Def. 3.2; EDD reconstruction T2E §3.3).
struct EddNode {
  std::string name;  ///< this level's component; "total" at the root
  double energy_j = 0;
  double time_s = 0;
  double forward_energy_j = 0;
  double backward_energy_j = 0;
  std::vector<EddNode> children;  ///< sorted by energy, largest first
};

/// The EDD of a footprint: one node per name prefix (name_path), at most kMaxEddDepth levels below
/// the root "total".
EddNode energy_distribution_diagram(const Footprint& footprint);

}  // namespace nnergy::account
