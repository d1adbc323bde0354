// `nnergy profile`: the flags. The campaign runs in the LibTorch plugin (profile_run.cc).
#include <memory>
#include <string>

#include "command.h"
#include "profile_options.h"
#include "torch_plugin.h"

namespace nnergy::cli {

void add_profile_command(CLI::App& app, CommandRun* selected, const std::string& command_line) {
  auto o = std::make_shared<ProfileOptions>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "Measure the unique operations of networks into a SQLite dataset (resumable)");
  cmd->add_option("--models", o->models, "comma-separated zoo names or .onnx paths");
  cmd->add_option("--networks", o->networks,
                  "as --models, and also measure each whole network (for `dataset validate`)");
  cmd->add_option("--modes", o->modes, "comma-separated: inference, training")
      ->capture_default_str();
  cmd->add_option("--device", o->device,
                  "cpu, or cuda:N (needs a CUDA LibTorch and NVML; Debian's LibTorch is CPU-only)")
      ->capture_default_str();
  cmd->add_option("--db", o->db, "SQLite dataset file (created when missing)");
  cmd->add_option("--min-time-s", o->min_time_s,
                  "minimum duration of one measurement, s (default: 1 on CUDA, 0.2 on the CPU)");
  cmd->add_option("--repeats", o->repeats, "measurements per op")->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "fp32, bf16, or fp16 (CUDA only)")->capture_default_str();
  cmd->add_flag("--tf32", o->tf32,
                "CUDA, fp32: allow TF32 tensor-core math in matmuls and convolutions (recorded as "
                "dtype tf32); without it both are strict fp32");
  cmd->add_option("--batch", o->batch, "samples per iteration (binds the batch dimension)")
      ->capture_default_str();
  cmd->add_option("--shard", o->shard, "I/N: measure only shard I of N")->capture_default_str();
  cmd->add_flag("--dry-run", o->dry_run, "list what would be measured and the estimated duration");
  cmd->add_option("--whitelist", o->whitelist,
                  "comma-separated ONNX op types to measure (default: the standard whitelist)");
  cmd->add_option("--threads", o->threads, "LibTorch CPU threads (default: number of cores)");
  cmd->add_option("--clocks-mhz", o->clocks_mhz,
                  "CUDA: comma-separated core clocks to lock, MHz, one after the other; 0 or "
                  "'default' = the unlocked default clock (locking needs root)");
  cmd->callback([o, selected, command_line] {
    *selected = [o, command_line] { return torch_plugin().run_profile(*o, command_line); };
  });
}

}  // namespace nnergy::cli
