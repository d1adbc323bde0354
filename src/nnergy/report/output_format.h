#pragma once

// The one door for a command's output: the api returns a result, this renders it in the format
// the front end chose (text, the JSON document, CSV), each result type providing render_text,
// to_json and, where it has rows, render_csv in namespace report. The CLI picks the format from
// its flags (choose_format); the Python package reads the JSON document.

#include <string>
#include <string_view>
#include <utility>

#include "nnergy/core/error.h"
#include "nnergy/core/json_text.h"

namespace nnergy::report {

enum class Format { kText, kJson, kCsv };

/// The format of `--json` / `--csv` flags: text when neither, InvalidInput "--json and --csv:
/// choose one output format" when both.
inline Format choose_format(bool json, bool csv = false) {
  if (json && csv) throw InvalidInput("--json and --csv: choose one output format");
  return json ? Format::kJson : csv ? Format::kCsv : Format::kText;
}

/// `result` in `format`: render_text(result, text_options...), the JSON document
/// (core::json_text of to_json(result)) or render_csv(result). Throws InvalidInput for CSV of a
/// result that has none.
template <class Result, class... TextOptions>
std::string render(const Result& result, Format format, TextOptions&&... text_options) {
  switch (format) {
    case Format::kJson:
      return core::json_text(to_json(result));
    case Format::kCsv:
      if constexpr (requires { render_csv(result); }) {
        return render_csv(result);
      } else {
        throw InvalidInput("--csv: this command writes text or --json, not CSV");
      }
    case Format::kText:
      break;
  }
  return render_text(result, std::forward<TextOptions>(text_options)...);
}

}  // namespace nnergy::report
