#include "nnergy_runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace nnergy::cli_test {

namespace fs = std::filesystem;

namespace {

const fs::path kDataDir = NNERGY_TEST_DATA_DIR;
const fs::path kFixtureDir = NNERGY_TEST_FIXTURE_DIR;

// The environment of the child: ours, with the data directory pinned to the source tree and the
// user catalog pointed at a path that does not exist, so that a developer's
// ~/.config/nnergy/devices.json cannot change the results. An `extra` entry replaces any entry of
// the same name (getenv would see only the first of two).
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> wanted = {
      "NNERGY_DATA_DIR=" + kDataDir.string(),
      "NNERGY_USER_DEVICES=" + (kFixtureDir / "cli" / "no-such-dir" / "devices.json").string()};
  wanted.insert(wanted.end(), extra.begin(), extra.end());
  const auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> env;
  const auto set = [&](const std::string& entry) {
    const std::string name = name_of(entry);
    std::erase_if(env, [&](const std::string& e) { return name_of(e) == name; });
    env.push_back(entry);
  };
  for (char** e = environ; *e != nullptr; ++e) set(*e);
  for (const std::string& entry : wanted) set(entry);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

RunResult run_nnergy(const std::vector<std::string>& args,
                     const std::vector<std::string>& extra_env) {
  RunResult result;
  int out_pipe[2];
  int err_pipe[2];
  if (pipe(out_pipe) != 0) return {-1, "", std::string("pipe: ") + std::strerror(errno)};
  if (pipe(err_pipe) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return {-1, "", std::string("pipe: ") + std::strerror(errno)};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
    posix_spawn_file_actions_addclose(&actions, fd);
  }
  std::vector<std::string> argv_strings{NNERGY_BINARY};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings = child_environment(extra_env);
  std::vector<char*> argv = c_strings(argv_strings);
  std::vector<char*> envp = c_strings(env_strings);

  pid_t pid = 0;
  const int spawn_error =
      posix_spawn(&pid, NNERGY_BINARY, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (spawn_error != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    result.err = std::string("posix_spawn " NNERGY_BINARY ": ") + std::strerror(spawn_error);
    return result;
  }

  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buffer[65536];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::ostream& operator<<(std::ostream& os, const RunResult& r) {
  return os << "exit " << r.exit_code << "\n--- stdout ---\n"
            << r.out.substr(0, 3000) << "\n--- stderr ---\n"
            << r.err.substr(0, 3000);
}

int spawn_nnergy(const std::vector<std::string>& args, const fs::path& out_path,
                 const fs::path& err_path) {
  std::vector<std::string> argv_strings{NNERGY_BINARY};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings = child_environment({});
  std::vector<char*> argv = c_strings(argv_strings);
  std::vector<char*> envp = c_strings(env_strings);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, NNERGY_BINARY, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return error == 0 ? static_cast<int>(pid) : -1;
}

fs::path nnergy_binary() { return NNERGY_BINARY; }

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const RunResult& run_cached(const std::vector<std::string>& args) {
  static std::map<std::vector<std::string>, RunResult> cache;
  auto it = cache.find(args);
  if (it == cache.end()) it = cache.emplace(args, run_nnergy(args)).first;
  return it->second;
}

nlohmann::json run_json(const std::vector<std::string>& args) {
  const RunResult& r = run_cached(args);
  EXPECT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.err, "") << r;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << "stdout is not JSON:\n" << r;
  return j.is_discarded() ? nlohmann::json() : j;
}

}  // namespace nnergy::cli_test
