#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace nnergy::account {

/// One copy of each distinct text of a program trace: the names, categories, devices, modules
/// and qualified names its events view (TraceEvent holds std::string_views, not strings). A
/// trace of a million events names a few hundred things, so the events share a few kilobytes
/// instead of holding a heap string each. Append-only; not thread-safe.
class NameTable {
 public:
  NameTable() = default;
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;
  /// Moving keeps every view valid: the text stays where it is. The moved-from table is empty.
  NameTable(NameTable&& other) noexcept;
  NameTable& operator=(NameTable&& other) noexcept;

  /// The table's copy of `text`, added on first sight. The view stays valid as long as the
  /// table: adding more text never moves what is already there. The empty text is {} and
  /// takes no room.
  std::string_view intern(std::string_view text);

  /// Distinct texts held.
  std::size_t size() const { return index_.size(); }

 private:
  /// Copies `text` into the current block (a new one when it does not fit).
  std::string_view store(std::string_view text);

  std::vector<std::unique_ptr<char[]>> blocks_;
  char* free_ = nullptr;                        ///< the unused rest of the last block
  std::size_t left_ = 0;                        ///< bytes at free_
  std::unordered_set<std::string_view> index_;  ///< views into blocks_
};

}  // namespace nnergy::account
