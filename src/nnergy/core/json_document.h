#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace nnergy::core {

/// The deepest nesting of arrays and objects an untrusted JSON document may have. nnergy's own
/// documents (catalogs, model files, records, traces) nest at most about 10 levels; a deeper
/// document is refused before it is parsed, since copying, comparing or writing a deep value is
/// recursive in nlohmann::json and an input nested 80,000 deep overflows the stack.
inline constexpr std::size_t kMaxJsonDepth = 256;

/// Throws InvalidInput, naming `origin` (a file path or what the text is), when `text` nests
/// arrays and objects deeper than kMaxJsonDepth: "ORIGIN: JSON nested deeper than 256 levels at
/// byte N; ...", N counting from 1 the byte that opens level 257. One linear pass that tracks the
/// depth outside strings (brackets inside strings, escaped quotes included, do not count); it
/// does not otherwise check that `text` is JSON. Thread-safe.
void check_json_depth(std::string_view text, std::string_view origin);

/// The one entry point for JSON nnergy did not write itself in this run (files, records, text
/// from users): check_json_depth, then nlohmann's parser. Throws InvalidInput for a document
/// nested too deep, and lets nlohmann::json::exception through for text that is not JSON
/// (parse_error) or holds a number beyond double's range (out_of_range), so that each reader
/// words that message for its own file. Thread-safe.
nlohmann::json parse_json_document(std::string_view text, std::string_view origin);

/// parse_json_document keeping the objects' keys in the file's order.
nlohmann::ordered_json parse_ordered_json_document(std::string_view text, std::string_view origin);

/// The longest prefix of a value's JSON text that describe_json_value quotes, bytes.
inline constexpr std::size_t kJsonDescriptionChars = 60;

/// A short description of a JSON value for error messages, never longer than about 100 bytes
/// whatever the value's size or depth: a scalar's JSON text ("3.5", "\"abc\"", "true", "null"),
/// a container's kind and size with the first kJsonDescriptionChars bytes of its compact JSON
/// text ("an array of 3 elements: [1,2,3]", "an object of 2 keys: {\"a\":1,...}"), a cut text
/// ending in "...". Invalid UTF-8 is written as U+FFFD. Iterative: safe on a value of any depth.
std::string describe_json_value(const nlohmann::json& value);

/// describe_json_value of an ordered_json value.
std::string describe_json_value(const nlohmann::ordered_json& value);

}  // namespace nnergy::core
