#pragma once

// "Did you mean …?" for messages about a mistyped name: the edit distance between two words and
// the nearest of a list of accepted names, when it is close enough to be a likely typo.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nnergy {

/// Edit distance between `a` and `b`: the fewest single-byte insertions, deletions,
/// substitutions and swaps of two adjacent bytes that turn one into the other (optimal string
/// alignment distance; "Rleu" is 1 from "Relu"). Case-sensitive; bytes, not Unicode characters.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// Index in `candidates` of the one nearest to `word` by the edit_distance of their ASCII
/// lower-case forms (so "conv" is at distance 0 from "Conv"), when that distance is at most
/// max(1, (length of `word`) / 3): close enough to be a typo of it. Ties go to the earlier
/// candidate; nullopt when none is that close.
std::optional<std::size_t> nearest_index(std::string_view word,
                                         const std::vector<std::string>& candidates);

/// The candidate at nearest_index, if any.
std::optional<std::string> nearest_name(std::string_view word,
                                        const std::vector<std::string>& candidates);

/// "did you mean 'X'?" when nearest_name finds X, else "": for the "what to do" part of an
/// InvalidInput message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace nnergy
