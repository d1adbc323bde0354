#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace nnergy::report {

/// The kinds of HTML report; each has its script (src/nnergy/report/html/assets/<kind>.js),
/// which draws its charts from the document the command writes with --json.
enum class HtmlKind { kPredict, kCompare, kAccount, kEvaluate, kArchline, kServe };

/// "predict", "compare", "account", "evaluate", "archline", "serve".
std::string to_string(HtmlKind kind);

/// True when this build holds the chart libraries (Vega, Vega-Lite, vega-embed, fetched from the
/// npm registry at configure time by scripts/fetch_report_libraries.py); without them no HTML
/// report can be written.
bool html_reports_available();

/// The chart libraries inlined into every report, as "name version" (e.g. "vega 5.30.0").
std::string html_library_versions();

/// One self-contained HTML page: the template with `title` (HTML-escaped), the style sheet, the
/// chart libraries, `data` (as JSON in a `<script type="application/json">` element) and the
/// kind's script inlined, so that it opens offline in any browser. Throws InvalidInput naming
/// `flag` when the build has no chart libraries.
std::string render_html(HtmlKind kind, std::string_view title, const nlohmann::ordered_json& data,
                        const std::string& flag);

/// render_html, written atomically to `file` (never half a file under its name).
void write_html(const std::filesystem::path& file, HtmlKind kind, std::string_view title,
                const nlohmann::ordered_json& data, const std::string& flag);

/// Where a command writes its document besides stdout; an empty path is not written. Each file
/// is named in messages by its setting, as the front end spells it (e.g. "--output").
struct DocumentFiles {
  std::filesystem::path json;  ///< the document as JSON, as --json prints it
  std::string json_setting;
  std::filesystem::path html;  ///< the HTML report of the document (render_html)
  std::string html_setting;
};

/// Writes the document `data()` makes to the files of `files`, all or none
/// (write_files_atomically): a failing write leaves every destination as it was. `data` is called
/// only when there is a file to write.
void write_document_files(const DocumentFiles& files, HtmlKind kind, std::string_view title,
                          const std::function<nlohmann::ordered_json()>& data);

}  // namespace nnergy::report
