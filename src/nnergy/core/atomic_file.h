#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace nnergy {

/// Writes `text` to `path` atomically: a temporary file next to it (`<path>.tmp.XXXXXX`, a
/// random name created exclusively: a planted file or symbolic link is never followed), written,
/// closed, then renamed over `path` (a symbolic link at `path` is replaced, not followed), so that
/// a reader never sees half a file and a failed write leaves the old file (or none) in place. The
/// directory must exist. Throws InvalidInput
/// "<what> <path>: cannot write the file (<reason>)", where `what` names the flag or the kind of
/// file (e.g. "--out", "model file"), and removes the temporary file.
void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           const std::string& what);

/// One file of write_files_atomically. `text` is not copied: it must outlive the call.
struct FileToWrite {
  std::filesystem::path path;
  std::string_view text;
  std::string what;  ///< the flag or kind of file, as in write_file_atomically
};

/// Writes several files as one: every file is first written to its temporary file, and only when
/// all were written are they renamed over their destinations, so that a failing write (a missing
/// directory, a full disk) leaves every destination as it was and no temporary behind. Throws
/// InvalidInput as write_file_atomically, naming the file that failed. A rename that fails after
/// others succeeded (the directory vanished meanwhile) leaves those renamed.
void write_files_atomically(const std::vector<FileToWrite>& files);

}  // namespace nnergy
