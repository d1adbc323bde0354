// The exporter end to end in-process: a real HTTP server scraped over TCP, with synthetic sources
// and the scriptable fake NVML (GPU failures, compute processes of a Slurm job).
#include "nnergy/fleet/gpu_exporter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "http_get.h"
#include "nnergy/core/error.h"
#include "nnergy/measure/source_factories.h"
#include "temp_dir_test.h"
#include "test_environment.h"

extern char** environ;

namespace nnergy::fleet {
namespace {

using test_support::http_get;
using ::testing::HasSubstr;
using ::testing::Not;

// The value of the first series whose line starts with `prefix` (name and labels), or nullopt.
std::optional<double> value_of(const std::string& exposition, const std::string& prefix) {
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) == 0) return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return std::nullopt;
}

std::vector<std::unique_ptr<measure::PowerSource>> open(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string argument = colon == std::string::npos ? "" : spec.substr(colon + 1);
  measure::Detection d = kind == "nvml" ? measure::open_nvml_sources(argument)
                                        : measure::open_synthetic_sources(argument);
  if (d.sources.empty()) throw std::runtime_error("no source for " + spec);
  return std::move(d.sources);
}

GpuExporterOptions local_options(double period_s = 0.02) {
  GpuExporterOptions o;
  o.address = parse_listen_address("127.0.0.1:0", "--listen");
  o.period_s = period_s;
  o.job_refresh_s = 0.05;
  return o;
}

// Scrapes until `done(body)` holds or `timeout_s` passes; returns the last body.
template <typename Done>
std::string scrape_until(std::uint16_t port, Done done, double timeout_s = 5) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::string body;
  do {
    body = http_get(port).body;
    if (done(body)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < end);
  return body;
}

TEST(PrometheusExporter, ServesASyntheticSourcesEnergyAsACounter) {
  GpuExporter exporter(open("synthetic:constant=250"), local_options());
  EXPECT_THAT(exporter.url(), HasSubstr("http://127.0.0.1:"));
  const std::string prefix = "nnergy_gpu_energy_joules_total{gpu=\"synthetic\"";
  const std::string first =
      scrape_until(exporter.port(), [&](const std::string& b) { return value_of(b, prefix); });
  const auto t0 = std::chrono::steady_clock::now();
  const double e0 = value_of(first, prefix).value();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::string second = http_get(exporter.port()).body;
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double e1 = value_of(second, prefix).value();
  // Samples lag the scrape by up to one period on each end: 250 W within 2 periods' worth.
  EXPECT_NEAR((e1 - e0) / dt, 250.0, 250.0 * 2 * 0.02 / dt + 1.0);
  EXPECT_THAT(second, HasSubstr("nnergy_gpu_power_watts{gpu=\"synthetic\""));
  EXPECT_THAT(second, HasSubstr("nnergy_source_up{source=\"synthetic\"} 1"));
  EXPECT_THAT(second, HasSubstr("exposer_scrapes_total"));
  EXPECT_GE(exporter.scrapes(), 2u);
}

TEST(PrometheusExporter, StaysScrapeableWhileConnectionsAreHeldIdle) {
  // 24 connections held open without a request (8 blinded the exporter when it had 8 workers
  // and a 30 s request timeout): a scrape is still answered at once, and the idle ones are
  // closed after the request timeout.
  GpuExporter exporter(open("synthetic:constant=250"), local_options());
  std::vector<int> idle;
  for (int i = 0; i < 24; ++i) idle.push_back(test_support::connect_local(exporter.port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(http_get(exporter.port()).status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  // After the 2 s request timeout (and slack for a loaded machine), the server has closed them:
  // a read gives 0.
  std::this_thread::sleep_for(std::chrono::milliseconds(4500));
  int closed = 0;
  for (const int fd : idle) {
    char byte = 0;
    if (fd >= 0 && recv(fd, &byte, 1, MSG_DONTWAIT) == 0) ++closed;
    if (fd >= 0) close(fd);
  }
  EXPECT_EQ(closed, 24);
}

TEST(PrometheusExporter, RefusesClientsOutsideTheAllowList) {
  GpuExporterOptions options = local_options();
  options.access_control_list = access_control_list("10.0.0.0/8", "--allow");
  GpuExporter exporter(open("synthetic:constant=250"), options);
  // civetweb accepts and closes at once: no status line.
  int status = 0;
  try {
    status = http_get(exporter.port()).status;
  } catch (const std::runtime_error&) {
  }
  EXPECT_NE(status, 200);
  GpuExporterOptions local = local_options();
  local.access_control_list = access_control_list("127.0.0.0/8", "--allow");
  GpuExporter allowed(open("synthetic:constant=250"), local);
  EXPECT_EQ(http_get(allowed.port()).status, 200);
}

TEST(PrometheusExporter, AnswersNotFoundOutsideMetrics) {
  GpuExporter exporter(open("synthetic:constant=1"), local_options());
  EXPECT_EQ(http_get(exporter.port(), "/metrics").status, 200);
  EXPECT_EQ(http_get(exporter.port(), "/nothing").status, 404);
}

TEST(PrometheusExporter, PortInUseIsInvalidInputNamingTheFlag) {
  GpuExporter first(open("synthetic:constant=1"), local_options());
  GpuExporterOptions again = local_options();
  again.address.port = first.port();
  try {
    GpuExporter second(open("synthetic:constant=1"), again);
    FAIL() << "a second exporter listened on a port in use";
  } catch (const InvalidInput& e) {
    EXPECT_THAT(e.what(), HasSubstr("--listen"));
    EXPECT_THAT(e.what(), HasSubstr("in use"));
  }
  EXPECT_EQ(http_get(first.port()).status, 200);
}

// The fake NVML with `script`, loaded as the driver would be.
class FakeNvmlExporter : public test_support::TempDirTest {
 protected:
  void use_script(const std::string& script) {
    std::ofstream(file("nvml.script")) << script;
    library_.emplace("NNERGY_NVML_LIBRARY", NNERGY_FAKE_NVML_PATH);
    script_.emplace("NNERGY_FAKE_NVML_SCRIPT", file("nvml.script"));
  }
  std::optional<measure::testing::ScopedEnv> library_;
  std::optional<measure::testing::ScopedEnv> script_;
};

TEST_F(FakeNvmlExporter, FailingGpuLosesItsSeriesAndTheOthersAreStillServed) {
  // GPU 1 falls off the bus (NVML_ERROR_GPU_IS_LOST) after a few reads.
  use_script(
      "gpus 2\nname 0 Fake H100\nuuid 0 GPU-aaaa\nuuid 1 GPU-bbbb\n"
      "energy_rate_mw 0 300000\nenergy_rate_mw 1 300000\npower_mw 0 300000\npower_mw 1 300000\n"
      "clock_sm_mhz 0 1410\nclock_sm_mhz 1 1410\nfail energy 15 after 5 gpu 1\n");
  GpuExporter exporter(open("nvml"), local_options());
  const std::string body = scrape_until(exporter.port(), [](const std::string& b) {
    return b.find("nnergy_source_up{source=\"nvml:1\"} 0") != std::string::npos;
  });
  EXPECT_THAT(body, HasSubstr("nnergy_source_up{source=\"nvml:1\"} 0"));
  EXPECT_THAT(body, HasSubstr("nnergy_gpu_energy_joules_total{gpu=\"0\",uuid=\"GPU-aaaa\","
                              "name=\"Fake H100\"}"));
  EXPECT_THAT(body, HasSubstr("nnergy_gpu_sm_clock_hertz{gpu=\"0\""));
  EXPECT_THAT(body, Not(HasSubstr("gpu=\"1\"")));
  // Still serving, and GPU 0's counter still counts.
  const std::string prefix = "nnergy_gpu_energy_joules_total{gpu=\"0\"";
  const double before = value_of(body, prefix).value();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_GT(value_of(http_get(exporter.port()).body, prefix).value(), before);
}

TEST_F(FakeNvmlExporter, CounterNeverGoesBackwardsWhenTheDriverCounterDoes) {
  // The driver's counter restarts (a reload) between reads; the exported one must not.
  use_script("energy_mj 0 5000000 6000000 7000000 1000 2000 3000 4000\npower_mw 0 100000\n");
  GpuExporter exporter(open("nvml"), local_options(0.01));
  const std::string prefix = "nnergy_gpu_energy_joules_total{gpu=\"0\"";
  double last = 0;
  for (int i = 0; i < 20; ++i) {
    if (const auto value = value_of(http_get(exporter.port()).body, prefix)) {
      EXPECT_GE(*value, last);
      last = *value;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(last, 7000.0);
}

// A `sleep 30` whose environment is the one `variable` ("NAME=VALUE"); its pid (0 on failure).
pid_t sleep_with_environment(const std::string& variable) {
  char sleep_path[] = "/bin/sleep";
  char seconds[] = "30";
  char* argv[] = {sleep_path, seconds, nullptr};
  std::string entry = variable;
  char* envp[] = {entry.data(), nullptr};
  pid_t child = 0;
  if (posix_spawn(&child, "/bin/sleep", nullptr, nullptr, argv, envp) != 0) return 0;
  return child;
}

// A fake scontrol in `dir` that says job `job` belongs to uid `uid`.
std::filesystem::path fake_scontrol(const std::filesystem::path& dir, const std::string& job,
                                    unsigned int uid) {
  const std::filesystem::path path = dir / "scontrol";
  std::ofstream(path) << "#!/bin/sh\necho 'JobId=" << job << " UserId=someone(" << uid
                      << ") GroupId=someone(0)'\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

TEST_F(FakeNvmlExporter, LabelsAGpuWithTheSlurmJobOfItsProcesses) {
  // A process of Slurm job 777 (by its environment) runs on GPU 0.
  const pid_t child = sleep_with_environment("SLURM_JOB_ID=777");
  ASSERT_GT(child, 0);
  use_script("gpus 2\nenergy_rate_mw 0 100000\nenergy_rate_mw 1 100000\nprocesses 0 " +
             std::to_string(child) + "\nprocesses 1\n");
  std::filesystem::create_directories(dir_ / "map");
  std::ofstream(dir_ / "map" / "1") << "4242\n";
  GpuExporterOptions options = local_options();
  options.job_mapping_dir = dir_ / "map";
  // Slurm says job 777 is this user's (the process runs in no Slurm cgroup here, so its
  // environment is trusted only for the job's owner).
  options.scontrol = fake_scontrol(dir_, "777", ::getuid());
  GpuExporter exporter(open("nvml"), options);
  const std::string body = scrape_until(exporter.port(), [](const std::string& b) {
    return b.find("slurm_job=\"777\"") != std::string::npos &&
           b.find("slurm_job=\"4242\"") != std::string::npos;
  });
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_THAT(body, HasSubstr("nnergy_gpu_energy_joules_total{gpu=\"0\",uuid=\"GPU-fake-0\","
                              "name=\"Fake GPU 0\",slurm_job=\"777\"}"));
  EXPECT_THAT(body, HasSubstr("nnergy_gpu_energy_joules_total{gpu=\"1\",uuid=\"GPU-fake-1\","
                              "name=\"Fake GPU 1\",slurm_job=\"4242\"}"));
  // Once the job's process is gone, the label goes.
  const std::string after = scrape_until(exporter.port(), [](const std::string& b) {
    return b.find("slurm_job=\"777\"") == std::string::npos;
  });
  EXPECT_THAT(after, Not(HasSubstr("slurm_job=\"777\"")));
}

TEST_F(FakeNvmlExporter, AForgedSlurmJobIdInAnEnvironmentLabelsNothing) {
  // `env SLURM_JOB_ID=777777 cmd` on GPU 0 by a user who does not own job 777777.
  const pid_t child = sleep_with_environment("SLURM_JOB_ID=777777");
  ASSERT_GT(child, 0);
  use_script("gpus 1\nenergy_rate_mw 0 100000\nprocesses 0 " + std::to_string(child) + "\n");
  GpuExporterOptions options = local_options();
  options.scontrol = fake_scontrol(dir_, "777777", ::getuid() + 1);
  GpuExporter exporter(open("nvml"), options);
  // Two refreshes of the labels later, still no label.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string body = http_get(exporter.port()).body;
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_THAT(body, HasSubstr("nnergy_gpu_energy_joules_total{gpu=\"0\""));
  EXPECT_THAT(body, Not(HasSubstr("777777")));
}

}  // namespace
}  // namespace nnergy::fleet
