#include <gtest/gtest.h>

#include <limits>

#include "nnergy/core/csv.h"
#include "nnergy/core/run_context.h"
#include "nnergy/core/text.h"

namespace nnergy {
namespace {

TEST(Trim, DropsBlanksAtBothEndsOnly) {
  EXPECT_EQ(trim("  a b \t\r\n"), "a b");
  EXPECT_EQ(trim(" \t "), "");
  EXPECT_EQ(trim(""), "");
}

TEST(SplitTrimmed, KeepsEmptyPiecesSoThatCallersCanNameThem) {
  EXPECT_EQ(split_trimmed(" a, b ,,c ", ','), (std::vector<std::string>{"a", "b", "", "c"}));
  EXPECT_EQ(split_trimmed("", ','), (std::vector<std::string>{""}));
}

TEST(CsvField, QuotesOnlyWhatPandasWouldMisread) {
  EXPECT_EQ(csv::field("conv1"), "conv1");
  EXPECT_EQ(csv::field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv::field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv::field("line\nbreak"), "\"line\nbreak\"");
  // pandas.read_csv(comment='#') cuts an unquoted line at '#'.
  EXPECT_EQ(csv::field("layer#3"), "\"layer#3\"");
}

TEST(CsvSplitLine, ReadsBackWhatFieldWrites) {
  const std::vector<std::string> cells = {"plain", "a,b", "q\"uote", "#x", ""};
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + csv::field(cells[i]);
  EXPECT_EQ(csv::split_line(line), cells);
}

TEST(RunContextCsvComments, KeepAMultiLineValueOnItsLine) {
  RunContext context = RunContext::now("nnergy x");
  context.add("note", "two\nlines");
  const std::string comments = context.to_csv_comments();
  EXPECT_NE(comments.find("# note: two lines\n"), std::string::npos) << comments;
  EXPECT_NE(comments.find("# tool: nnergy\n"), std::string::npos) << comments;
}

}  // namespace
}  // namespace nnergy

namespace nnergy {
namespace {

TEST(DurationText, RoundsToWhatMattersAtItsSize) {
  EXPECT_EQ(duration_text(0.4), "0 s");
  EXPECT_EQ(duration_text(42.4), "42 s");
  EXPECT_EQ(duration_text(185), "3 min 05 s");
  EXPECT_EQ(duration_text(239.7), "4 min 00 s");
  EXPECT_EQ(duration_text(7800), "2 h 10 min");
  EXPECT_EQ(duration_text(-3), "0 s");
  EXPECT_EQ(duration_text(std::numeric_limits<double>::quiet_NaN()), "0 s");
}

TEST(EscapeControlCharacters, NoEscapeSequenceReachesTheTerminal) {
  EXPECT_EQ(escape_control_characters("conv1/relu"), "conv1/relu");
  EXPECT_EQ(escape_control_characters("a\x1b]52;c;ZXZpbA==\x07"
                                      "b"),
            "a\\x1b]52;c;ZXZpbA==\\x07b");
  EXPECT_EQ(escape_control_characters("x\ny\tz\x7f"), "x\\x0ay\\x09z\\x7f");
  EXPECT_EQ(escape_control_characters("\xc2\x9b"
                                      "31m"),
            "\\u009b31m");                                     // C1 CSI
  EXPECT_EQ(escape_control_characters("µs → °C"), "µs → °C");  // UTF-8 kept
}

TEST(CsvField, FormulasAreNeutralisedNumbersAreNot) {
  EXPECT_EQ(csv::field("=HYPERLINK(\"http://x\")"), "\"'=HYPERLINK(\"\"http://x\"\")\"");
  EXPECT_EQ(csv::field("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(csv::field("+cmd"), "'+cmd");
  EXPECT_EQ(csv::field("-1.5"), "-1.5");
  EXPECT_EQ(csv::field("+3e-4"), "+3e-4");
  EXPECT_EQ(csv::field("-"), "'-");
  EXPECT_EQ(csv::field("conv1"), "conv1");
}

}  // namespace
}  // namespace nnergy
