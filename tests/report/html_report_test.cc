// The HTML page writer (report/html_report.h): what it inlines and how it escapes.
#include "nnergy/report/html_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>


namespace {

using nnergy::report::HtmlKind;
using testing::HasSubstr;

TEST(HtmlReport, InlinesEverythingAndEscapesWhatCouldEndAnElement) {
  if (!nnergy::report::html_reports_available()) GTEST_SKIP() << "no chart libraries in this build";
  nlohmann::ordered_json data = {{"name", "a</script><!-- {{style}}"}};
  const std::string page =
      nnergy::report::render_html(HtmlKind::kCompare, "x < y & \"z\" {{data}}", data, "--html");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(page, HasSubstr("<title>x &lt; y &amp; &quot;z&quot; {{data}}</title>"));
  // The data: every '<' as \u003c, so the one element ends where it should.
  EXPECT_THAT(page, HasSubstr("\"a\\u003c/script>\\u003c!-- {{style}}\""));
  const std::size_t data_at = page.find("id=\"nnergy-data\">");
  ASSERT_NE(data_at, std::string::npos);
  EXPECT_EQ(page.find("</script>", data_at), page.find("\"}\n</script>", data_at) + 3);
  // No placeholder is left (the one in the data is data: the template is filled in one pass),
  // and the libraries and the kind's script are in.
  for (const char* placeholder : {"{{libraries}}", "{{scripts}}", "{{title}}"})
    EXPECT_EQ(page.find(placeholder), std::string::npos) << placeholder;
  EXPECT_EQ(page.find("{{style}}"), page.find("{{style}}\"}"));
  EXPECT_THAT(page, HasSubstr("vega"));
  EXPECT_THAT(nnergy::report::html_library_versions(), HasSubstr("vega-lite "));
}

}  // namespace
