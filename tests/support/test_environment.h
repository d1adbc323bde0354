#pragma once

// Scoped environment variables and temporary files for the tests that drive power sources (the
// fake NVML library reads its script from a file named by an environment variable; the monitor
// tests hide the machine's own NVML and RAPL).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nnergy::measure::testing {

// Sets an environment variable (or unsets it, for nullopt) for a scope and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A uniquely named file in the test temporary directory, removed at scope exit.
class TempFile {
 public:
  explicit TempFile(const std::string& content = "") {
    std::string pattern = ::testing::TempDir() + "nnergy_measure_test_XXXXXX";
    const int fd = mkstemp(pattern.data());
    if (fd < 0) throw std::runtime_error("mkstemp failed for " + pattern);
    close(fd);
    path_ = pattern;
    write(content);
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write(const std::string& content) const { std::ofstream(path_) << content; }
  std::vector<std::string> lines() const {
    std::ifstream in(path_);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace nnergy::measure::testing
