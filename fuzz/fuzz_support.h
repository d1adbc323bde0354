// Shared by the libFuzzer targets in fuzz/: what counts as a finding, and a scratch file for
// readers that only take a path.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <typeinfo>

#include "nnergy/core/error.h"

namespace nnergy::fuzz {

/// Runs `body` on one input. nnergy::InvalidInput is the documented answer to a bad file (exit
/// code 2) and is a normal outcome; any other exception is a finding: it is printed with its
/// type and the process aborts, so that libFuzzer saves the input as a crash.
template <typename Body>
int run_one(const char* target, Body&& body) {
  try {
    body();
  } catch (const nnergy::InvalidInput&) {
    // the reader refused the input: expected
  } catch (const std::exception& e) {
    std::fprintf(stderr, "==%s== FINDING: uncaught %s (not nnergy::InvalidInput): %s\n", target,
                 typeid(e).name(), e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "==%s== FINDING: uncaught exception of a non-std type\n", target);
    std::abort();
  }
  return 0;
}

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// A file under /dev/shm (else the temp directory) named after the process, for readers that
/// take a path; removed (with any `-wal`/`-shm`/`-journal` siblings) when it goes out of scope.
class ScratchFile {
 public:
  ScratchFile(const char* target, const char* suffix, const std::uint8_t* data, std::size_t size) {
    std::filesystem::path dir = "/dev/shm";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) dir = std::filesystem::temp_directory_path();
    path_ =
        dir / ("nnergy-fuzz-" + std::string(target) + "-" + std::to_string(::getpid()) + suffix);
    remove_all_siblings();
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out) {
      std::fprintf(stderr, "cannot write the scratch file %s\n", path_.c_str());
      std::abort();
    }
  }
  ~ScratchFile() { remove_all_siblings(); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  void remove_all_siblings() {
    std::error_code ec;
    for (const char* extra : {"", "-wal", "-shm", "-journal"}) {
      std::filesystem::remove(path_.string() + extra, ec);
    }
  }
  std::filesystem::path path_;
};

}  // namespace nnergy::fuzz
