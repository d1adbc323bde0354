#pragma once

#include <cstddef>
#include <string>

namespace nnergy::test_support {

/// How deep the hostile documents of the readers' tests nest: far past core::kMaxJsonDepth (256),
/// and deep enough that the recursive dump() or copy of such a value overflowed the stack
/// (SIGSEGV) before the readers refused it.
inline constexpr std::size_t kJsonBombDepth = 100000;

/// Arrays nested `depth` deep and closed again, "[[...]]": 2 × depth bytes of well-formed JSON, to
/// put where a reader expects a value.
inline std::string nested_json_arrays(std::size_t depth = kJsonBombDepth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

}  // namespace nnergy::test_support
