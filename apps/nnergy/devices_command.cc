// `nnergy devices`: the device catalog, or one device in detail, or the power sources present.
#include <memory>
#include <string>

#include "command.h"
#include "nnergy/api/devices.h"
#include "nnergy/report/devices_report.h"
#include "nnergy/report/output_format.h"

namespace nnergy::cli {

namespace {

struct DevicesOptions {
  std::string id;
  std::string devices_file;
  bool json = false;
  bool detect = false;
};

std::string run_devices(const DevicesOptions& o, const std::string& command_line) {
  if (o.detect) {
    const report::PowerSourcesReport found = api::detect_power_sources();
    return report::render(found, report::choose_format(o.json));
  }
  api::DevicesRequest r;
  r.names = SettingNames::kFlag;
  r.command_line = command_line;
  r.device = o.id;
  r.devices_file = o.devices_file;
  const report::DevicesReport report = api::devices(r);
  return report::render(report, report::choose_format(o.json));
}

}  // namespace

void add_devices_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto options = std::make_shared<DevicesOptions>();
  CLI::App* cmd = app.add_subcommand("devices", "List the device catalog, or show one device");
  cmd->add_option("id", options->id, "device id or alias to show in detail");
  cmd->add_option("--devices-file", options->devices_file,
                  "extra device catalog (JSON) whose devices replace or add to the built-in ones");
  cmd->add_flag("--json", options->json, "write JSON instead of text");
  cmd->add_flag("--detect", options->detect,
                "list the power sources present on this machine (NVML GPUs, RAPL zones) and why "
                "others are unavailable");
  cmd->callback([options, selected, command_line] {
    *selected = [options, command_line] {
      return CommandResult{run_devices(*options, command_line), 0};
    };
  });
}

}  // namespace nnergy::cli
