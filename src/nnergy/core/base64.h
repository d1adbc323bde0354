#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nnergy::base64 {

/// Standard base64 (RFC 4648 §4: alphabet A–Z a–z 0–9 + /, '=' padding, no line breaks) of
/// `bytes`. Written by hand because none of the project's dependencies offers it; used to carry
/// binary models (XGBoost UBJSON) inside JSON model files.
std::string encode(std::string_view bytes);

/// The bytes of standard, padded base64 `text`; nullopt when `text` is not that (a character
/// outside the alphabet, a length that is not a multiple of 4, misplaced padding).
std::optional<std::string> decode(std::string_view text);

}  // namespace nnergy::base64
