// `nnergy zoo`: the bundled architecture-only models with their inputs, op counts and GMACs.
#include <memory>

#include "command.h"
#include "nnergy/api/zoo.h"
#include "nnergy/report/output_format.h"
#include "nnergy/report/zoo_report.h"

namespace nnergy::cli {

void add_zoo_command(CLI::App& app, CommandRun* selected) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd =
      app.add_subcommand("zoo", "List the bundled models with input shapes, op counts and GMACs");
  cmd->add_flag("--json", *json, "write JSON instead of text");
  cmd->callback([json, selected] {
    *selected = [json] {
      const report::ZooReport report = api::zoo();
      return CommandResult{report::render(report, report::choose_format(*json)), 0};
    };
  });
}

}  // namespace nnergy::cli
