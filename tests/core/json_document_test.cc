#include "nnergy/core/json_document.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "nnergy/core/error.h"

namespace nnergy::core {
namespace {

using ::testing::HasSubstr;

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

std::string refusal(const std::string& text) {
  try {
    check_json_depth(text, "deep.json");
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

TEST(JsonDocument, AcceptsTheDepthLimitAndRefusesOneLevelMore) {
  EXPECT_EQ(kMaxJsonDepth, 256u);
  const nlohmann::json at_limit = parse_json_document(nested_arrays(kMaxJsonDepth), "ok.json");
  EXPECT_TRUE(at_limit.is_array());
  EXPECT_EQ(refusal(nested_arrays(kMaxJsonDepth)), "");

  const std::string message = refusal(nested_arrays(kMaxJsonDepth + 1));
  EXPECT_THAT(message, HasSubstr("deep.json: JSON nested deeper than 256 levels at byte 257"));
  EXPECT_THAT(message, HasSubstr("expected a flat document"));
  EXPECT_THROW(parse_json_document(nested_arrays(kMaxJsonDepth + 1), "deep.json"), InvalidInput);
  EXPECT_THROW(parse_ordered_json_document(nested_arrays(kMaxJsonDepth + 1), "deep.json"),
               InvalidInput);
}

TEST(JsonDocument, CountsObjectsAndArraysTogether) {
  std::string text;
  for (std::size_t i = 0; i <= kMaxJsonDepth; ++i) text += i % 2 == 0 ? "{\"a\":" : "[";
  EXPECT_THAT(refusal(text), HasSubstr("deeper than 256 levels"));
  // Closed containers give their level back: many siblings stay shallow.
  std::string siblings = "[";
  for (int i = 0; i < 1000; ++i) siblings += std::string(i == 0 ? "" : ",") + "[{\"x\":[1]}]";
  siblings += "]";
  EXPECT_EQ(parse_json_document(siblings, "siblings.json").size(), 1000u);
}

TEST(JsonDocument, BracketsInsideStringsAndEscapedQuotesDoNotCount) {
  const std::string brackets(100000, '[');
  const nlohmann::json in_string =
      parse_json_document("{\"name\": \"" + brackets + "\"}", "strings.json");
  EXPECT_EQ(in_string["name"].get<std::string>(), brackets);
  // An escaped quote does not end the string; an escaped backslash before a quote does.
  const std::string escaped = "[\"\\\"" + brackets + "\", \"\\\\\"]";
  EXPECT_EQ(parse_json_document(escaped, "escaped.json").size(), 2u);
  EXPECT_THAT(refusal("[\"\\\\\"" + std::string(kMaxJsonDepth, '[')),
              HasSubstr("at byte " + std::to_string(5 + kMaxJsonDepth)));
}

TEST(JsonDocument, SyntaxErrorsStayNlohmannsForTheReaderToWord) {
  EXPECT_THROW(parse_json_document("{\"a\": ", "cut.json"), nlohmann::json::parse_error);
  EXPECT_THROW(parse_json_document("[1e999]", "huge.json"), nlohmann::json::out_of_range);
}

TEST(JsonDocument, RefusesAnEightyThousandDeepDocumentFastWithoutParsingIt) {
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& text : {std::string(80000, '['), nested_arrays(80000),
                                  std::string(80000, '{') + std::string(80000, '}')}) {
    EXPECT_THROW(parse_json_document(text, "bomb.json"), InvalidInput);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(JsonDocument, DescribesScalarsByTheirText) {
  EXPECT_EQ(describe_json_value(nlohmann::json(3.5)), "3.5");
  EXPECT_EQ(describe_json_value(nlohmann::json("abc")), "\"abc\"");
  EXPECT_EQ(describe_json_value(nlohmann::json(true)), "true");
  EXPECT_EQ(describe_json_value(nlohmann::json(nullptr)), "null");
  EXPECT_EQ(describe_json_value(nlohmann::json("bad \xff byte")), "\"bad \xEF\xBF\xBD byte\"");
  const std::string described = describe_json_value(nlohmann::json(std::string(100000, 'x')));
  EXPECT_EQ(described, "\"" + std::string(kJsonDescriptionChars - 1, 'x') + "...");
}

TEST(JsonDocument, DescribesContainersByKindSizeAndAShortPrefix) {
  EXPECT_EQ(describe_json_value(nlohmann::json::parse("[1,2,3]")),
            "an array of 3 elements: [1,2,3]");
  EXPECT_EQ(describe_json_value(nlohmann::json::parse("{\"a\":{\"b\":[true]}}")),
            "an object of 1 key: {\"a\":{\"b\":[true]}}");
  EXPECT_EQ(describe_json_value(nlohmann::ordered_json::parse("{\"z\":1,\"a\":\"x\"}")),
            "an object of 2 keys: {\"z\":1,\"a\":\"x\"}");
  EXPECT_EQ(describe_json_value(nlohmann::json::array()), "an array of 0 elements: []");
  nlohmann::json wide = nlohmann::json::array();
  for (int i = 0; i < 100000; ++i) wide.push_back(i);
  const std::string described = describe_json_value(wide);
  EXPECT_THAT(described, HasSubstr("an array of 100000 elements: [0,1,2,"));
  EXPECT_LE(described.size(), 40 + kJsonDescriptionChars);
}

TEST(JsonDocument, DescribesADeepValueWithoutRecursing) {
  // Built by hand (nlohmann's parser is iterative; its copy and dump are not).
  nlohmann::json deep = nlohmann::json::array();
  for (int i = 0; i < 100000; ++i) {
    nlohmann::json outer = nlohmann::json::array();
    outer.push_back(std::move(deep));
    deep = std::move(outer);
  }
  const std::string described = describe_json_value(deep);
  EXPECT_EQ(described, "an array of 1 element: " + std::string(kJsonDescriptionChars, '[') + "...");
}

}  // namespace
}  // namespace nnergy::core
