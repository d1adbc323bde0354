#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace nnergy::cli_test {

/// What one run of the `nnergy` executable produced.
struct RunResult {
  int exit_code = -1;  ///< the process's exit status; -1 when it did not exit normally
  std::string out;
  std::string err;
};

/// Exit code and the first few thousand characters of both streams, for failure messages.
std::ostream& operator<<(std::ostream& os, const RunResult& r);

/// Runs the built `nnergy` (no shell involved) with `args`, stdin from /dev/null, and collects
/// both streams (drained together, so a child filling one pipe cannot block). The child's
/// environment is ours with the data directory pinned to the source tree's data/ and the user
/// device catalog pointed at a path that does not exist, so that a developer's
/// ~/.config/nnergy/devices.json cannot change results; `extra_env` ("NAME=value") is added last
/// and wins.
RunResult run_nnergy(const std::vector<std::string>& args,
                     const std::vector<std::string>& extra_env = {});

/// As run_nnergy, but each distinct argument list runs once per test process (several tests read
/// the same outputs).
const RunResult& run_cached(const std::vector<std::string>& args);

/// Runs (cached) a command that must succeed with nothing on stderr and JSON on stdout; expects
/// all of that, and returns null when it did not hold.
nlohmann::json run_json(const std::vector<std::string>& args);

/// Starts `nnergy` with `args` in the same environment as run_nnergy, stdout and stderr written
/// to the files `out_path` and `err_path`, and returns its pid (-1 when it could not be started)
/// for the caller to signal and wait for.
int spawn_nnergy(const std::vector<std::string>& args, const std::filesystem::path& out_path,
                 const std::filesystem::path& err_path);

/// The path of the `nnergy` executable under test.
std::filesystem::path nnergy_binary();

/// The whole content of `path` (empty when it cannot be read).
std::string read_file(const std::filesystem::path& path);

}  // namespace nnergy::cli_test
