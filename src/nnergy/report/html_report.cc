#include "nnergy/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "nnergy/core/atomic_file.h"
#include "nnergy/core/error.h"
#include "nnergy/core/json_text.h"
#include "nnergy/core/text.h"
#include "nnergy/report/embedded_files.h"

namespace nnergy::report {

namespace {

// The chart libraries, in the order they must load (vega-embed needs the other two).
constexpr std::array<std::string_view, 3> kLibraries = {"vega.min.js", "vega-lite.min.js",
                                                        "vega-embed.min.js"};
// The page and its scripts (src/nnergy/report/html/assets).
constexpr std::array<std::string_view, 9> kAssets = {"report.html", "report.css",  "common.js",
                                                     "predict.js",  "compare.js",  "account.js",
                                                     "evaluate.js", "archline.js", "serve.js"};

const EmbeddedFile* find_file(std::string_view name) {
  for (const EmbeddedFile& file : embedded_files())
    if (file.name == name) return &file;
  return nullptr;
}

std::string file_text(std::string_view name) {
  const EmbeddedFile* file = find_file(name);
  if (file == nullptr)
    throw InternalError(fmt::format("HTML report asset {} is not embedded", name));
  return file->text();
}

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

// A script's text as the body of an inline <script> element: the HTML parser ends the element
// at the first "</script" and treats "<!--" specially, whatever JavaScript context they are in.
// Inside JavaScript strings, regular expressions and comments (the only places they occur)
// "<\/" means "</" and "<\!--" means "<!--".
std::string script_element(std::string text) {
  replace_all(text, "</script", "<\\/script");
  replace_all(text, "</SCRIPT", "<\\/SCRIPT");
  replace_all(text, "<!--", "<\\!--");
  return "<script>" + text + "</script>\n";
}

// `data` as the body of a JSON data element: every "<" written as \u003c (only strings can hold
// one), so that no name from the user's files can end the element.
std::string data_element(const nlohmann::ordered_json& data) {
  std::string json = core::json_text(data, -1);
  replace_all(json, "<", "\\u003c");
  return "<script type=\"application/json\" id=\"nnergy-data\">" + json + "</script>";
}

// The template with each {{name}} replaced by values.at(name), in one pass over the template
// (an inserted text is never searched for placeholders). Each placeholder occurs exactly once.
std::string fill(std::string_view page, const std::map<std::string, std::string>& values) {
  std::string out;
  std::set<std::string> filled;
  std::size_t from = 0;
  for (std::size_t at = page.find("{{"); at != std::string_view::npos; at = page.find("{{", from)) {
    const std::size_t end = page.find("}}", at);
    if (end == std::string_view::npos) break;
    const std::string name(page.substr(at + 2, end - at - 2));
    const auto value = values.find(name);
    if (value == values.end() || !filled.insert(name).second) {
      throw InternalError(fmt::format("HTML report template: unexpected {{{{{}}}}}", name));
    }
    out.append(page.substr(from, at - from));
    out += value->second;
    from = end + 2;
  }
  out.append(page.substr(from));
  if (filled.size() != values.size()) {
    throw InternalError("HTML report template lacks one of its placeholders");
  }
  return out;
}

}  // namespace

std::string to_string(HtmlKind kind) {
  switch (kind) {
    case HtmlKind::kPredict:
      return "predict";
    case HtmlKind::kCompare:
      return "compare";
    case HtmlKind::kAccount:
      return "account";
    case HtmlKind::kEvaluate:
      return "evaluate";
    case HtmlKind::kArchline:
      return "archline";
    case HtmlKind::kServe:
      return "serve";
  }
  throw InternalError("unknown HTML report kind");
}

bool html_reports_available() {
  const auto embedded = [](std::string_view name) { return find_file(name) != nullptr; };
  return std::all_of(kLibraries.begin(), kLibraries.end(), embedded) &&
         std::all_of(kAssets.begin(), kAssets.end(), embedded);
}

std::string html_library_versions() {
  const EmbeddedFile* versions = find_file("versions.txt");
  if (versions == nullptr) return "";
  std::string text = versions->text();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  replace_all(text, "\n", ", ");
  return text;
}

std::string render_html(HtmlKind kind, std::string_view title, const nlohmann::ordered_json& data,
                        const std::string& flag) {
  if (!html_reports_available()) {
    throw InvalidInput(
        flag +
        ": this nnergy was built without the chart libraries the HTML reports inline (Vega, "
        "Vega-Lite and vega-embed are fetched from the npm registry when CMake configures the "
        "build, and that failed or had no network); run `python3 scripts/fetch_report_libraries.py "
        "BUILD_DIR/report-libraries` with network access, then re-run cmake and rebuild");
  }
  std::string libraries;
  for (std::string_view name : kLibraries) libraries += script_element(file_text(name));
  return fill(file_text("report.html"),
              {{"title", markup_escape(title)},
               {"style", file_text("report.css")},
               {"libraries", libraries},
               {"data", data_element(data)},
               {"scripts", script_element(file_text("common.js")) +
                               script_element(file_text(to_string(kind) + ".js"))}});
}

void write_html(const std::filesystem::path& file, HtmlKind kind, std::string_view title,
                const nlohmann::ordered_json& data, const std::string& flag) {
  write_file_atomically(file, render_html(kind, title, data, flag), flag);
}

void write_document_files(const DocumentFiles& files, HtmlKind kind, std::string_view title,
                          const std::function<nlohmann::ordered_json()>& data) {
  if (files.json.empty() && files.html.empty()) return;
  const nlohmann::ordered_json document = data();
  const std::string json = files.json.empty() ? std::string() : core::json_text(document);
  const std::string html =
      files.html.empty() ? std::string() : render_html(kind, title, document, files.html_setting);
  std::vector<FileToWrite> writes;
  if (!files.json.empty()) writes.push_back({files.json, json, files.json_setting});
  if (!files.html.empty()) writes.push_back({files.html, html, files.html_setting});
  write_files_atomically(writes);
}

}  // namespace nnergy::report
