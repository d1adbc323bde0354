// `nnergy archline show|synth`: the archline of a catalog device (its energy parameters and the
// quantities derived from them) and synthetic benchmark points made from it.
#include <memory>
#include <string>

#include "command.h"
#include "nnergy/api/archline.h"
#include "nnergy/device/precision.h"
#include "nnergy/report/archline_report.h"
#include "nnergy/report/output_format.h"

namespace nnergy::cli {

namespace {

struct ArchlineDeviceOptions {
  std::string device;
  std::string precisions;
  std::string devices_file;
  bool json = false;  // show
  // synth
  double noise = 0.02;
  std::uint64_t seed = 1;
  double off_clock_fraction = 0;
  std::string out;
};

CommandResult run_show(const ArchlineDeviceOptions& o, const std::string& command_line) {
  const report::ArchlineShowReport r =
      api::archline_show({o.device, device::parse_precision_list(o.precisions, "--precision"),
                          o.devices_file, command_line, SettingNames::kFlag});
  return {report::render(r, report::choose_format(o.json)), 0};
}

CommandResult run_synth(const ArchlineDeviceOptions& o, const std::string& command_line) {
  return {report::render_text(api::archline_synth(
              {o.device, device::parse_precision_list(o.precisions, "--precision"), o.noise, o.seed,
               o.off_clock_fraction, o.devices_file, o.out, command_line, SettingNames::kFlag})),
          0};
}

}  // namespace

void add_archline_device_subcommands(CLI::App& archline, CommandRun* selected,
                                     const std::string& command_line) {
  auto o = std::make_shared<ArchlineDeviceOptions>();
  CLI::App* show = archline.add_subcommand(
      "show", "Archline parameters of a catalog device and the quantities derived from them");
  show->add_option("device", o->device, "device id or alias")->required();
  show->add_option("--precision", o->precisions, "fp32, fp64 or both (default both)");
  show->add_option("--devices-file", o->devices_file, "extra device catalog (JSON)");
  show->add_flag("--json", o->json, "write JSON instead of text");
  show->callback([o, selected, command_line] {
    *selected = [o, command_line] { return run_show(*o, command_line); };
  });

  CLI::App* synth = archline.add_subcommand(
      "synth", "Synthetic benchmark points from a catalog device's parameters, with noise");
  synth->add_option("--device", o->device, "catalog device whose parameters and peaks to use")
      ->required();
  synth->add_option("--precision", o->precisions, "fp32, fp64 or fp32,fp64 (default fp32)");
  synth->add_option("--noise", o->noise, "relative standard deviation of the energy noise")
      ->capture_default_str();
  synth->add_option("--seed", o->seed, "random seed")->capture_default_str();
  synth
      ->add_option("--off-clock-fraction", o->off_clock_fraction,
                   "fraction of points marked as taken at another clock")
      ->capture_default_str();
  synth->add_option("--devices-file", o->devices_file, "extra device catalog (JSON)");
  synth->add_option("--out", o->out, "CSV file to write")->required();
  synth->callback([o, selected, command_line] {
    *selected = [o, command_line] { return run_synth(*o, command_line); };
  });
}

}  // namespace nnergy::cli
