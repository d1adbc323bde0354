#pragma once

#include <string>
#include <utility>

#include "nnergy/core/error.h"

namespace nnergy::test_support {

/// The message of the InvalidInput that `call()` throws, or "(no error)" when it returns; any
/// other exception propagates and fails the test.
template <typename Call>
std::string invalid_input_message(Call&& call) {
  try {
    std::forward<Call>(call)();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace nnergy::test_support
