// The name table the events' texts view: one copy of each text, views that stay put.
#include "nnergy/account/name_table.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace nnergy::account {
namespace {

TEST(NameTable, KeepsOneCopyOfEachText) {
  NameTable names;
  std::string text = "model/layer_3/MatMul";
  const std::string_view first = names.intern(text);
  text[0] = 'X';  // the table holds a copy, not a view of the caller's string
  EXPECT_EQ(first, "model/layer_3/MatMul");
  const std::string_view again = names.intern(std::string("model/layer_3/MatMul"));
  EXPECT_EQ(again.data(), first.data());
  EXPECT_NE(names.intern("model/layer_3/Relu").data(), first.data());
  EXPECT_EQ(names.size(), 2u);
}

TEST(NameTable, EmptyTextTakesNoRoom) {
  NameTable names;
  EXPECT_TRUE(names.intern("").empty());
  EXPECT_EQ(names.size(), 0u);
}

TEST(NameTable, ViewsStayValidAsTheTableGrowsAndMoves) {
  NameTable names;
  std::vector<std::pair<std::string, std::string_view>> kept;
  // Enough short texts to fill several blocks, and texts longer than a block between them.
  for (int i = 0; i < 5000; ++i) {
    std::string text = "scope_" + std::to_string(i) + "/op";
    if (i % 1000 == 999) text = std::string(40000 + static_cast<std::size_t>(i), 'a' + i % 26);
    kept.emplace_back(text, names.intern(text));
  }
  NameTable moved = std::move(names);
  for (const auto& [text, view] : kept) {
    ASSERT_EQ(view, text);
    ASSERT_EQ(moved.intern(text).data(), view.data());
  }
  EXPECT_EQ(moved.size(), kept.size());
}

}  // namespace
}  // namespace nnergy::account
