#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace nnergy {

/// Bad user input: a file, flag or data value. The message says where (file, line, flag), what
/// was expected and what was found. The CLI maps it to exit code 2.
class InvalidInput : public std::runtime_error {
 public:
  explicit InvalidInput(const std::string& message) : std::runtime_error(message) {}
};

/// A device call (CUDA, NVML) failed. The message names the call and its error code.
/// The CLI maps it to exit code 3.
class DeviceError : public std::runtime_error {
 public:
  explicit DeviceError(const std::string& message) : std::runtime_error(message) {}
};

/// The environment failed at run time: a system call that is neither about the user's input nor
/// a device call (e.g. waitpid on a command nnergy started). The message names the call and its
/// error. The CLI maps it to exit code 1.
class RuntimeFailure : public std::runtime_error {
 public:
  explicit RuntimeFailure(const std::string& message) : std::runtime_error(message) {}
};

/// A broken invariant inside nnergy: a bug, never the user's fault. The CLI maps it to exit code 1.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message) : std::logic_error(message) {}
};

/// Exit codes of the `nnergy` CLI.
enum class ExitCode : int { kOk = 0, kRuntimeFailure = 1, kBadInput = 2, kDeviceUnavailable = 3 };

/// Joins `items` with ", " — for messages that list names (accepted values, fields, sources).
std::string join_with_commas(const std::vector<std::string>& items);

}  // namespace nnergy
