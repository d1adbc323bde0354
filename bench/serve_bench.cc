// Wall time of `nnergy serve`: a 70B model with a 10-point batch sweep, as the library call and
// as the whole process (start, catalogs read, prediction, JSON written). See README.md.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "nnergy/api/serve.h"
#include "nnergy/report/serve_report.h"

extern char** environ;

namespace nnergy {
namespace {

const std::vector<std::string> kArgs = {"serve",
                                        "meta-llama/Llama-3.1-70B-Instruct",
                                        "--device",
                                        "h100",
                                        "--tp",
                                        "4",
                                        "--input-tokens",
                                        "1000",
                                        "--output-tokens",
                                        "200",
                                        "--sweep-batch",
                                        "1,2,4,8,16,32,64,128,256,512",
                                        "--json"};

// The library call the command makes (catalogs read each time, as a process does).
void BM_Serve70bBatchSweep(benchmark::State& state) {
  api::ServeRequest r;
  r.model = "meta-llama/Llama-3.1-70B-Instruct";
  r.device = "h100";
  r.tp = 4;
  r.input_tokens = 1000;
  r.output_tokens = 200;
  r.sweep_batch = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  r.command_line = "nnergy_serve_bench";
  for (auto _ : state) {
    benchmark::DoNotOptimize(report::to_json(api::serve(r)).dump().size());
  }
}
BENCHMARK(BM_Serve70bBatchSweep)->Unit(benchmark::kMillisecond);

// The whole process: `nnergy serve ... --json` started, run and waited for, stdout to /dev/null.
void BM_Serve70bBatchSweepProcess(benchmark::State& state) {
  std::vector<std::string> argv_text = {NNERGY_BENCH_BINARY};
  argv_text.insert(argv_text.end(), kArgs.begin(), kArgs.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  for (auto _ : state) {
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
      state.SkipWithError("cannot start nnergy");
      break;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError("nnergy serve failed");
      break;
    }
  }
  posix_spawn_file_actions_destroy(&actions);
}
BENCHMARK(BM_Serve70bBatchSweepProcess)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace nnergy

BENCHMARK_MAIN();
