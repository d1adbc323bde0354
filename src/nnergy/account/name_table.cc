#include "nnergy/account/name_table.h"

#include <cstring>
#include <utility>

namespace nnergy::account {
namespace {

// Names are short: a 16 KiB block holds hundreds, and a small trace allocates little.
constexpr std::size_t kBlockBytes = std::size_t{1} << 14;

}  // namespace

NameTable::NameTable(NameTable&& other) noexcept { *this = std::move(other); }

NameTable& NameTable::operator=(NameTable&& other) noexcept {
  if (this == &other) return *this;
  blocks_ = std::move(other.blocks_);
  free_ = std::exchange(other.free_, nullptr);
  left_ = std::exchange(other.left_, 0);
  index_ = std::move(other.index_);
  other.blocks_.clear();
  other.index_.clear();
  return *this;
}

std::string_view NameTable::intern(std::string_view text) {
  if (text.empty()) return {};
  const auto found = index_.find(text);
  if (found != index_.end()) return *found;
  const std::string_view copy = store(text);
  index_.insert(copy);
  return copy;
}

std::string_view NameTable::store(std::string_view text) {
  if (text.size() > kBlockBytes / 4) {
    // A long text gets a block of its own; the current block keeps filling.
    blocks_.push_back(std::make_unique<char[]>(text.size()));
    std::memcpy(blocks_.back().get(), text.data(), text.size());
    return {blocks_.back().get(), text.size()};
  }
  if (text.size() > left_) {
    blocks_.push_back(std::make_unique<char[]>(kBlockBytes));
    free_ = blocks_.back().get();
    left_ = kBlockBytes;
  }
  std::memcpy(free_, text.data(), text.size());
  const std::string_view copy(free_, text.size());
  free_ += text.size();
  left_ -= text.size();
  return copy;
}

}  // namespace nnergy::account
