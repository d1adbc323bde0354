#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace nnergy::cli {

/// What a subcommand run produces: the whole stdout text, written only after the run succeeded
/// so that a failing run prints nothing on stdout.
using CommandRun = std::function<std::string()>;

/// Registers a subcommand on `app`; when the subcommand is selected, `*selected` is set to the
/// function that runs it. `command_line` is the full invocation, for the outputs' context block.
void add_predict_command(CLI::App& app, CommandRun* selected, const std::string& command_line);
void add_zoo_command(CLI::App& app, CommandRun* selected);
void add_devices_command(CLI::App& app, CommandRun* selected, const std::string& command_line);

}  // namespace nnergy::cli
