#include "nnergy/core/nearest_name.h"

#include <algorithm>
#include <vector>

#include "nnergy/core/text.h"

namespace nnergy {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // d[i][j] = distance(a[0, i), b[0, j)), one flat row-major table.
  const std::size_t width = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * width);
  auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * width + j]; };
  for (std::size_t i = 0; i <= a.size(); ++i) at(i, 0) = i;
  for (std::size_t j = 0; j <= b.size(); ++j) at(0, j) = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);  // adjacent transposition
      }
    }
  }
  return at(a.size(), b.size());
}

std::optional<std::size_t> nearest_index(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  const std::string wanted = ascii_lower(word);
  const std::size_t limit = std::max<std::size_t>(1, wanted.size() / 3);
  std::optional<std::size_t> best;
  std::size_t best_distance = limit + 1;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::size_t d = edit_distance(wanted, ascii_lower(candidates[i]));
    if (d < best_distance) {
      best = i;
      best_distance = d;
    }
  }
  return best;
}

std::optional<std::string> nearest_name(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  const std::optional<std::size_t> i = nearest_index(word, candidates);
  if (!i) return std::nullopt;
  return candidates[*i];
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::optional<std::string> name = nearest_name(word, candidates);
  return name ? "did you mean '" + *name + "'?" : "";
}

}  // namespace nnergy
