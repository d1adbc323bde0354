#include "nnergy/account/trace_event.h"

namespace nnergy::account {

const char* pass_name(Pass pass) {
  switch (pass) {
    case Pass::kForward:
      return "forward";
    case Pass::kBackward:
      return "backward";
    case Pass::kOther:
      return "other";
  }
  return "other";
}

}  // namespace nnergy::account
