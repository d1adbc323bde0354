#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nnergy/regress/regressor.h"
#include "nnergy/report/progress_line.h"

namespace nnergy::cli {

/// What a subcommand run produces: the whole stdout text, written only after the run succeeded
/// so that a failing run prints nothing on stdout, and the process exit code.
struct CommandResult {
  std::string output;
  int exit_code = 0;
};

using CommandRun = std::function<CommandResult()>;

/// Registers a subcommand on `app`; when the subcommand is selected, `*selected` is set to the
/// function that runs it. `command_line` is the full invocation, for the outputs' context block.
void add_predict_command(CLI::App& app, CommandRun* selected, const std::string& command_line);
void add_zoo_command(CLI::App& app, CommandRun* selected);
void add_devices_command(CLI::App& app, CommandRun* selected, const std::string& command_line);
/// `trailing` holds the words after `--` on the command line: the command to monitor.
void add_monitor_command(CLI::App& app, CommandRun* selected, const std::string& command_line,
                         const std::vector<std::string>& trailing);
/// `nnergy exporter`: a Prometheus exporter of GPU and CPU energy (fleet/gpu_exporter.h).
void add_exporter_command(CLI::App& app, CommandRun* selected, const std::string& command_line);
/// `nnergy jobs`: GPU energy per Slurm job from the SPANK plugin's records.
void add_jobs_command(CLI::App& app, CommandRun* selected, const std::string& command_line);
#ifdef NNERGY_HAVE_TORCH
void add_profile_command(CLI::App& app, CommandRun* selected, const std::string& command_line);
#endif
void add_dataset_command(CLI::App& app, CommandRun* selected, const std::string& command_line);
void add_train_command(CLI::App& app, CommandRun* selected, const std::string& command_line);
void add_evaluate_command(CLI::App& app, CommandRun* selected, const std::string& command_line);
/// `nnergy calibrate`: the analytical model fitted to published measurements.
void add_calibrate_command(CLI::App& app, CommandRun* selected, const std::string& command_line);
/// `nnergy archline run|fit|plot|show|synth` (seed 003).
void add_archline_command(CLI::App& app, CommandRun* selected, const std::string& command_line);
/// `nnergy archline show|synth`, subcommands of `archline` (called by add_archline_command).
void add_archline_device_subcommands(CLI::App& archline, CommandRun* selected,
                                     const std::string& command_line);
/// `nnergy account`: energy accounting of a recorded run (seed 001).
void add_account_command(CLI::App& app, CommandRun* selected, const std::string& command_line);

/// `nnergy serve`: time, power and energy per token of serving a language model.
void add_serve_command(CLI::App& app, CommandRun* selected, const std::string& command_line);

/// `nnergy kernel gemm`: one kernel's time, power and energy by the kernel model.
void add_kernel_command(CLI::App& app, CommandRun* selected, const std::string& command_line);

/// `nnergy compare`: one network on several devices.
void add_compare_command(CLI::App& app, CommandRun* selected, const std::string& command_line);

/// The values of --dim NAME=VALUE (repeatable) by name; throws InvalidInput naming the item
/// that is not NAME=INTEGER.
std::map<std::string, std::int64_t> parse_dim_bindings(const std::vector<std::string>& dims);

/// Every regressor of this build: the standard ones, plus the LibTorch ones where built.
regress::RegressorRegistry available_regressors();

/// A progress line for `what`'s `unit` on stderr: one line updated in place when stderr is a
/// terminal, at most a few plain lines otherwise (report/progress_line.h). stdout is untouched.
std::unique_ptr<report::ProgressLine> stderr_progress(std::string what, std::string unit);

}  // namespace nnergy::cli
