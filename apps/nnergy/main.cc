// nnergy: time, power and energy of deep neural networks on GPUs.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/core/error.h"
#include "nnergy/core/version.h"

namespace {

// The registered subcommands' names, in registration order.
std::string command_names(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

int fail(nnergy::ExitCode code, const std::string& message) {
  std::cerr << "nnergy: error: " << message << "\n";
  return static_cast<int>(code);
}

}  // namespace

int main(int argc, char** argv) {
  std::string command_line = "nnergy";
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];

  // Words after the first `--` belong to the command `nnergy monitor` runs; they are kept away
  // from CLI11, which would otherwise parse them as its own options and positionals.
  std::vector<char*> own_args(argv, argv + argc);
  std::vector<std::string> trailing;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      trailing.assign(argv + i + 1, argv + argc);
      own_args.resize(static_cast<std::size_t>(i));
      break;
    }
  }

  CLI::App app{"nnergy: time, power and energy of deep neural networks on GPUs"};
  app.set_version_flag("--version", std::string(nnergy::kToolVersion));
  app.require_subcommand(1);
  nnergy::cli::CommandRun run;
  nnergy::cli::add_predict_command(app, &run, command_line);
  nnergy::cli::add_serve_command(app, &run, command_line);
  nnergy::cli::add_compare_command(app, &run, command_line);
  nnergy::cli::add_kernel_command(app, &run, command_line);
  nnergy::cli::add_zoo_command(app, &run);
  nnergy::cli::add_devices_command(app, &run, command_line);
  nnergy::cli::add_monitor_command(app, &run, command_line, trailing);
  nnergy::cli::add_exporter_command(app, &run, command_line);
  nnergy::cli::add_jobs_command(app, &run, command_line);
#ifdef NNERGY_HAVE_TORCH
  nnergy::cli::add_profile_command(app, &run, command_line);
#endif
  nnergy::cli::add_dataset_command(app, &run, command_line);
  nnergy::cli::add_train_command(app, &run, command_line);
  nnergy::cli::add_evaluate_command(app, &run, command_line);
  nnergy::cli::add_calibrate_command(app, &run, command_line);
  nnergy::cli::add_account_command(app, &run, command_line);
  nnergy::cli::add_archline_command(app, &run, command_line);

  try {
    app.parse(static_cast<int>(own_args.size()), own_args.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RequiredError& e) {
    // CLI11 reports a missing subcommand before an unexpected word: name the word instead.
    if (!app.remaining().empty()) {
      return fail(nnergy::ExitCode::kBadInput, "unknown command '" + app.remaining().front() +
                                                   "'; accepted: " + command_names(app) +
                                                   " (run `nnergy --help`)");
    }
    return fail(nnergy::ExitCode::kBadInput,
                std::string(e.what()) + " (run `nnergy --help` or `nnergy <command> --help`)");
  } catch (const CLI::ParseError& e) {
    return fail(nnergy::ExitCode::kBadInput,
                std::string(e.what()) + " (run `nnergy --help` or `nnergy <command> --help`)");
  }

  if (!trailing.empty() && !app.got_subcommand("monitor")) {
    return fail(nnergy::ExitCode::kBadInput,
                "unexpected words after `--` (only `nnergy monitor -- COMMAND` takes them): " +
                    trailing.front());
  }

  try {
    const nnergy::cli::CommandResult result = run ? run() : nnergy::cli::CommandResult{};
    std::fwrite(result.output.data(), 1, result.output.size(), stdout);
    if (std::fflush(stdout) != 0) {
      return fail(nnergy::ExitCode::kRuntimeFailure, "cannot write stdout");
    }
    return result.exit_code;
  } catch (const nnergy::InvalidInput& e) {
    return fail(nnergy::ExitCode::kBadInput, e.what());
  } catch (const nnergy::DeviceError& e) {
    return fail(nnergy::ExitCode::kDeviceUnavailable, e.what());
  } catch (const nnergy::RuntimeFailure& e) {
    return fail(nnergy::ExitCode::kRuntimeFailure, e.what());
  } catch (const std::exception& e) {
    return fail(nnergy::ExitCode::kRuntimeFailure, e.what());
  }
}
