#pragma once

// A request's settings as command-line options, made from the request's setting table
// (api/request_setting.h): one option or flag per setting, in the table's order, with the
// table's help and default; the given ones are stored into the request through the table.

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "nnergy/api/request_setting.h"

namespace nnergy::cli {

template <class Request>
class RequestOptions {
 public:
  /// Adds the options of `table` (which must outlive this) to `cmd`.
  RequestOptions(CLI::App* cmd, const api::SettingTable<Request>& table) {
    for (const auto& entry : table.entries()) {
      auto slot = std::make_unique<Slot>();
      slot->keyword = entry.name;
      slot->setting = &entry.value;
      const api::RequestSetting<Request>& s = entry.value;
      switch (s.type) {
        case api::SettingType::kSwitch:
          slot->option = cmd->add_flag(s.flag, slot->on, entry.summary);
          break;
        case api::SettingType::kBindings:
          slot->option = cmd->add_option(s.flag, slot->items, entry.summary);
          break;
        default:
          slot->option = cmd->add_option(s.flag, slot->text, entry.summary);
          break;
      }
      if (s.type == api::SettingType::kInteger) slot->option->type_name("INT");
      if (s.type == api::SettingType::kNumber) slot->option->type_name("FLOAT");
      if (s.type == api::SettingType::kBindings) slot->option->type_name("NAME=VALUE");
      if (!s.default_text.empty()) slot->option->default_str(s.default_text);
      slots_.push_back(std::move(slot));
    }
  }

  /// Stores every setting given on the command line into `request` (its `names` say how
  /// messages spell them: kFlag). Throws InvalidInput for a value of the wrong type or
  /// vocabulary, naming the flag.
  void fill(Request& request) const {
    for (const auto& slot : slots_) {
      if (slot->option->count() == 0) continue;
      const api::RequestSetting<Request>& s = *slot->setting;
      switch (s.type) {
        case api::SettingType::kSwitch:
          s.apply(request, slot->on);
          break;
        case api::SettingType::kBindings:
          s.apply(request, parse_dim_bindings(slot->items));
          break;
        default:
          s.apply(request,
                  api::parse_setting_text(s.type, slot->text, request.names, slot->keyword));
          break;
      }
    }
  }

 private:
  struct Slot {
    std::string keyword;
    const api::RequestSetting<Request>* setting = nullptr;
    std::string text;
    bool on = false;
    std::vector<std::string> items;
    CLI::Option* option = nullptr;
  };
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace nnergy::cli
