// nnergy: time, power and energy of deep neural networks on GPUs.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <string>

#include "command.h"
#include "nnergy/core/error.h"
#include "nnergy/core/version.h"

namespace {

int fail(nnergy::ExitCode code, const std::string& message) {
  std::cerr << "nnergy: error: " << message << "\n";
  return static_cast<int>(code);
}

}  // namespace

int main(int argc, char** argv) {
  std::string command_line = "nnergy";
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];

  CLI::App app{"nnergy: time, power and energy of deep neural networks on GPUs"};
  app.set_version_flag("--version", std::string(nnergy::kToolVersion));
  app.require_subcommand(1);
  nnergy::cli::CommandRun run;
  nnergy::cli::add_predict_command(app, &run, command_line);
  nnergy::cli::add_zoo_command(app, &run);
  nnergy::cli::add_devices_command(app, &run, command_line);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RequiredError& e) {
    // CLI11 reports a missing subcommand before an unexpected word: name the word instead.
    if (!app.remaining().empty()) {
      return fail(nnergy::ExitCode::kBadInput,
                  "unknown command '" + app.remaining().front() +
                      "'; accepted: predict, zoo, devices (run `nnergy --help`)");
    }
    return fail(nnergy::ExitCode::kBadInput,
                std::string(e.what()) + " (run `nnergy --help` or `nnergy <command> --help`)");
  } catch (const CLI::ParseError& e) {
    return fail(nnergy::ExitCode::kBadInput,
                std::string(e.what()) + " (run `nnergy --help` or `nnergy <command> --help`)");
  }

  try {
    const std::string output = run ? run() : std::string();
    std::fwrite(output.data(), 1, output.size(), stdout);
    return std::fflush(stdout) == 0
               ? 0
               : fail(nnergy::ExitCode::kRuntimeFailure, "cannot write stdout");
  } catch (const nnergy::InvalidInput& e) {
    return fail(nnergy::ExitCode::kBadInput, e.what());
  } catch (const nnergy::DeviceError& e) {
    return fail(nnergy::ExitCode::kDeviceUnavailable, e.what());
  } catch (const std::exception& e) {
    return fail(nnergy::ExitCode::kRuntimeFailure, e.what());
  }
}
