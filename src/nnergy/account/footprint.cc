#include "nnergy/account/footprint.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "nnergy/core/error.h"
#include "nnergy/core/statistics.h"

namespace nnergy::account {
namespace {

void add_into(FootprintEntry& into, const FootprintEntry& from) {
  into.energy_j += from.energy_j;
  into.time_s += from.time_s;
  into.unmeasured_time_s += from.unmeasured_time_s;
  into.forward_energy_j += from.forward_energy_j;
  into.backward_energy_j += from.backward_energy_j;
  into.other_energy_j += from.other_energy_j;
  into.cpu_energy_j += from.cpu_energy_j;
  into.gpu_energy_j += from.gpu_energy_j;
  into.event_count += from.event_count;
}

template <typename Key>
Footprint sorted(std::unordered_map<Key, FootprintEntry>&& entries) {
  Footprint result;
  result.reserve(entries.size());
  for (auto& [name, entry] : entries) result.push_back(std::move(entry));
  std::sort(result.begin(), result.end(),
            [](const FootprintEntry& a, const FootprintEntry& b) { return a.name < b.name; });
  return result;
}

// One node per name prefix. finish() recurses once per level: name_path caps the levels at
// kMaxEddDepth.
struct TreeBuilder {
  EddNode node;
  std::map<std::string, TreeBuilder> children;

  EddNode finish() {
    EddNode out = node;
    for (auto& [name, child] : children) out.children.push_back(child.finish());
    std::stable_sort(out.children.begin(), out.children.end(),
                     [](const EddNode& a, const EddNode& b) { return a.energy_j > b.energy_j; });
    return out;
  }
};

void add_to_node(EddNode& node, const FootprintEntry& entry) {
  node.energy_j += entry.energy_j;
  node.time_s += entry.time_s;
  node.forward_energy_j += entry.forward_energy_j;
  node.backward_energy_j += entry.backward_energy_j;
}

}  // namespace

Footprint tensor_energy_footprint(const std::vector<TraceEvent>& events,
                                  const Accounting& accounting) {
  if (accounting.events.size() != events.size()) {
    throw InternalError("tensor_energy_footprint: accounting of another trace");
  }
  // Keyed by the events' own views: no string is built per event.
  std::unordered_map<std::string_view, FootprintEntry> entries;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& event = events[i];
    const EventEnergy& energy = accounting.events[i];
    FootprintEntry& entry = entries[event.qualified_name];
    if (entry.event_count == 0) entry.name = event.qualified_name;
    entry.energy_j += energy.energy_j;
    entry.time_s += energy.exclusive_time_s;
    entry.unmeasured_time_s += energy.unmeasured_time_s;
    (event.pass == Pass::kForward    ? entry.forward_energy_j
     : event.pass == Pass::kBackward ? entry.backward_energy_j
                                     : entry.other_energy_j) += energy.energy_j;
    (event.device == "cpu" ? entry.cpu_energy_j : entry.gpu_energy_j) += energy.energy_j;
    ++entry.event_count;
  }
  return sorted(std::move(entries));
}

SummarizeRule parse_summarize_rule(const std::string& rule, const std::string& flag) {
  const std::size_t equals = rule.rfind('=');
  if (equals == std::string::npos || equals == 0) {
    throw InvalidInput(flag + " '" + rule +
                       "': expected REGEX=REPLACEMENT (e.g. 'layer\\d+\\.\\d+=block'), found no "
                       "'=' after a regex");
  }
  SummarizeRule parsed;
  parsed.text = rule;
  parsed.replacement = rule.substr(equals + 1);
  try {
    parsed.pattern = std::regex(rule.substr(0, equals), std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw InvalidInput(flag + " '" + rule + "': expected a valid ECMAScript regex before '=', " +
                       "found an invalid one (" + e.what() + ")");
  }
  return parsed;
}

std::vector<SummarizeRule> default_summarize_rules() {
  // A component boundary is the start, '/' or '.'; the lookahead keeps the boundary after it.
  const std::vector<std::string> rules = {
      R"((^|[/.])layer_\d+(?=[/.]|$)=$1layer_*)",
      R"((^|[/.])layers\.\d+(?=[/.]|$)=$1layers.*)",
      R"((^|[/.])blocks\.\d+(?=[/.]|$)=$1blocks.*)",
      R"((^|[/.])h\.\d+(?=[/.]|$)=$1h.*)",
      R"((^|[/.])(layer\d+)\.\d+(?=[/.]|$)=$1$2.*)",
      // Kineto's per-step annotations: every step is the same program.
      R"((^|/)ProfilerStep#\d+(?=/|$)=$1ProfilerStep#*)",
  };
  std::vector<SummarizeRule> parsed;
  for (const std::string& rule : rules) parsed.push_back(parse_summarize_rule(rule, "default"));
  return parsed;
}

Footprint summarize(const Footprint& footprint, const std::vector<SummarizeRule>& rules) {
  std::unordered_map<std::string, FootprintEntry> entries;
  for (const FootprintEntry& entry : footprint) {
    std::string name = entry.name;
    for (const SummarizeRule& rule : rules) {
      name = std::regex_replace(name, rule.pattern, rule.replacement);
    }
    FootprintEntry& into = entries[name];
    into.name = name;
    add_into(into, entry);
  }
  return sorted(std::move(entries));
}

Footprint merge_footprints(const std::vector<Footprint>& footprints) {
  std::unordered_map<std::string, FootprintEntry> entries;
  for (const Footprint& footprint : footprints) {
    for (const FootprintEntry& entry : footprint) {
      FootprintEntry& into = entries[entry.name];
      into.name = entry.name;
      add_into(into, entry);
    }
  }
  return sorted(std::move(entries));
}

double accounting_similarity(const Footprint& a, const Footprint& b) {
  std::map<std::string, std::pair<double, double>> joined;
  for (const FootprintEntry& entry : a) joined[entry.name].first += entry.energy_j;
  for (const FootprintEntry& entry : b) joined[entry.name].second += entry.energy_j;
  std::vector<double> x;
  std::vector<double> y;
  for (const auto& [name, pair] : joined) {
    x.push_back(pair.first);
    y.push_back(pair.second);
  }
  return statistics::pearson_correlation(x, y);
}

namespace {

// Calls visit(begin, end) with the byte range of each component of `name` (as name_path splits
// it, without the cap), in order, until visit returns false.
template <typename Visit>
void for_each_component(std::string_view name, Visit&& visit) {
  std::size_t begin = 0;
  while (true) {
    const std::size_t slash = name.find('/', begin);
    if (slash == std::string_view::npos) {
      visit(begin, name.size());
      return;
    }
    // A scope component, split again at '.'; empty pieces ("a..b", "//") are left out.
    const std::string_view scope = name.substr(begin, slash - begin);
    std::size_t from = 0;
    while (true) {
      const std::size_t dot = scope.find('.', from);
      const std::size_t end = dot == std::string_view::npos ? scope.size() : dot;
      if (end > from && !visit(begin + from, begin + end)) return;
      if (dot == std::string_view::npos) break;
      from = dot + 1;
    }
    begin = slash + 1;
  }
}

}  // namespace

std::size_t name_depth(std::string_view qualified_name) {
  std::size_t depth = 0;
  for_each_component(qualified_name, [&](std::size_t, std::size_t) {
    ++depth;
    return true;
  });
  return depth;
}

std::vector<std::string> name_path(const std::string& qualified_name) {
  std::vector<std::string> path;
  for_each_component(qualified_name, [&](std::size_t begin, std::size_t end) {
    if (path.size() + 1 == kMaxEddDepth) {
      path.push_back(qualified_name.substr(begin));  // this level and all deeper ones, as one
      return false;
    }
    path.push_back(qualified_name.substr(begin, end - begin));
    return true;
  });
  return path;
}

EddNode energy_distribution_diagram(const Footprint& footprint) {
  TreeBuilder root;
  root.node.name = "total";
  for (const FootprintEntry& entry : footprint) {
    add_to_node(root.node, entry);
    TreeBuilder* at = &root;
    for (const std::string& component : name_path(entry.name)) {
      TreeBuilder& child = at->children[component];
      child.node.name = component;
      add_to_node(child.node, entry);
      at = &child;
    }
  }
  return root.finish();
}

}  // namespace nnergy::account
