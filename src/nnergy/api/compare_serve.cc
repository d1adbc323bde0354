#include "nnergy/api/compare_serve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "nnergy/api/gpu_devices.h"
#include "nnergy/core/carbon.h"
#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"

namespace nnergy::api {

namespace {

// The batches tried when a latency target is given: about 1.5× apart, up to the largest that
// fits (each point one serving prediction).
std::vector<int> batch_grid(double largest) {
  std::vector<int> grid;
  for (double b = 1; b <= largest; b = std::max(b + 1, std::floor(b * 1.5))) {
    grid.push_back(static_cast<int>(b));
  }
  if (grid.empty() || grid.back() < static_cast<int>(largest)) {
    grid.push_back(static_cast<int>(largest));
  }
  return grid;
}

bool meets(const serve::ServeResult& r, const CompareServeRequest& q) {
  return (!q.max_itl_s || r.time_per_output_token_s <= *q.max_itl_s) &&
         (!q.max_ttft_s || r.ttft_s <= *q.max_ttft_s);
}

std::string target_text(const CompareServeRequest& q) {
  std::string text;
  if (q.max_itl_s) text = fmt::format("ITL ≤ {:g} ms", *q.max_itl_s * 1e3);
  if (q.max_ttft_s) {
    text += fmt::format("{}TTFT ≤ {:g} ms", text.empty() ? "" : " and ", *q.max_ttft_s * 1e3);
  }
  return text;
}

// The first sentence of a refusal, which names the cause; the rest says what to do.
std::string first_clause(const std::string& message) {
  const std::size_t end = message.find("; ");
  return end == std::string::npos ? message : message.substr(0, end);
}

void check(const CompareServeRequest& q) {
  const auto positive = [&](const std::optional<double>& v, const char* setting) {
    if (v && !(*v > 0 && std::isfinite(*v))) {
      throw InvalidInput(fmt::format("{}: expected a positive number of milliseconds, found {:g}",
                                     setting_name(q.names, setting), *v * 1e3));
    }
  };
  positive(q.max_itl_s, "max_itl_ms");
  positive(q.max_ttft_s, "max_ttft_ms");
  for (const int n : q.gpus) {
    if (n < 1 || n > 1024) {
      throw InvalidInput(fmt::format("{} {}: expected GPU counts from 1 to 1024",
                                     setting_name(q.names, "gpus"), n));
    }
  }
  for (const auto& [device, price] : q.price_per_gpu_hour) {
    if (!(price >= 0 && std::isfinite(price))) {
      throw InvalidInput(fmt::format("{}: expected a price of 0 or more, found {:g}{}",
                                     setting_name(q.names, "price_per_gpu_hour"), price,
                                     device.empty() ? "" : " for " + device));
    }
  }
  check_grid_gco2e_per_kwh(q.grid_gco2e_per_kwh, q.names);
}

}  // namespace

report::ServeComparison compare_serve(const CompareServeRequest& q) {
  check(q);
  const ServeCatalogs catalogs = ServeCatalogs::load(q.devices_file);
  report::ServeComparison out;
  out.model = q.model;
  out.input_tokens = q.input_tokens;
  out.output_tokens = q.output_tokens;
  out.max_itl_s = q.max_itl_s;
  out.max_ttft_s = q.max_ttft_s;
  out.power_scope = q.power_scope == PowerScope::kNode ? "node" : "gpu";

  // Devices: those named (each must exist), else every GPU of the catalog.
  std::vector<const device::DeviceSpec*> devices;
  if (q.devices.empty()) {
    for (const device::DeviceSpec& d : catalogs.devices.devices())
      if (detail::is_gpu(d)) devices.push_back(&d);
  } else {
    for (const std::string& name : q.devices)
      devices.push_back(&catalogs.devices.find(name, setting_name(q.names, "devices")));
  }
  // Prices by catalog id (the request may name a device by alias or nvidia-smi name).
  std::map<std::string, double> prices;
  for (const auto& [name, price] : q.price_per_gpu_hour) {
    prices[name.empty()
               ? name
               : catalogs.devices.find(name, setting_name(q.names, "price_per_gpu_hour")).id] =
        price;
  }
  const std::vector<int> counts = q.gpus.empty() ? std::vector<int>{1, 2, 4, 8} : q.gpus;

  ServeRequest base;
  base.model = q.model;
  base.precision = q.precision;
  base.kv_precision = q.kv_precision;
  base.engine = q.engine;
  base.workload = q.workload;
  base.input_tokens = q.input_tokens;
  base.output_tokens = q.output_tokens;
  base.power_scope = q.power_scope;
  base.names = q.names;
  base.command_line = q.command_line;

  // The model is the same for every deployment: an unknown one is refused once, at once.
  const llm::Architecture model = serve_model(base, catalogs);
  out.model = model.id;

  std::size_t left_out = 0;
  std::vector<std::string> refusals;  // whole messages, for when nothing runs
  std::string method;
  std::vector<std::string> model_notes;
  for (const device::DeviceSpec* d : devices) {
    for (const int n : counts) {
      report::ServeCandidate c;
      c.device = d->id;
      c.device_name = d->name;
      c.gpus = n;
      ServeRequest r = base;
      r.device = d->id;
      r.gpus = n;
      r.tp = n;
      report::ServeReport first;
      try {
        first = serve(r, catalogs);
      } catch (const InvalidInput& e) {
        const std::string why = e.what();
        if (q.devices.empty() && why.rfind(setting_name(q.names, "precision"), 0) == 0) {
          ++left_out;  // a GPU of the catalog without the format's units: counted in a note
          break;
        }
        refusals.push_back(why);
        c.reason = first_clause(why);
        out.candidates.push_back(std::move(c));
        continue;
      }
      if (method.empty()) {
        method = first.method;
        for (const std::string& note : first.notes)
          if (note.rfind("model configuration", 0) == 0) model_notes.push_back(note);
      }
      c.runs = true;
      c.tp = first.tp;
      c.precision = first.precision + (first.weight_only ? " (weight-only)" : "");
      c.result = first.result;
      c.batch = first.result.batch;
      if (q.max_itl_s || q.max_ttft_s) {
        // The largest batch of the grid within the target (ITL and TTFT grow with the batch).
        ServeRequest swept = r;
        swept.sweep_batch = batch_grid(first.result.largest_batch);
        const report::ServeReport grid = serve(swept, catalogs);
        const report::ServeSweepPoint* best = nullptr;
        for (const report::ServeSweepPoint& p : grid.batch_sweep)
          if (p.fits && meets(p.result, q)) best = &p;
        if (best) {
          c.meets_target = true;
          c.result = best->result;
          c.batch = best->batch;
        } else {
          c.result = grid.batch_sweep.front().result;
          c.batch = grid.batch_sweep.front().batch;
          c.reason = fmt::format("misses {} even at batch 1 (ITL {:.3g} ms, TTFT {:.3g} ms)",
                                 target_text(q), c.result.time_per_output_token_s * 1e3,
                                 c.result.ttft_s * 1e3);
        }
      } else {
        c.meets_target = true;
      }
      const double tokens_per_hour = c.result.output_tokens_per_s * 3600;
      const auto price = prices.count(d->id) ? prices.find(d->id) : prices.find("");
      if (price != prices.end() && tokens_per_hour > 0) {
        c.usd_per_million_tokens = price->second * n / tokens_per_hour * 1e6;
      }
      if (q.grid_gco2e_per_kwh) {
        c.gco2e_per_million_tokens =
            co2e_g(c.result.energy_per_output_token_j * 1e6, *q.grid_gco2e_per_kwh);
      }
      out.candidates.push_back(std::move(c));
    }
  }
  if (method.empty()) {
    // Nothing runs: one cause for all (token counts beyond the context) is the error itself.
    if (!refusals.empty() &&
        std::all_of(refusals.begin(), refusals.end(),
                    [&](const std::string& m) { return m == refusals.front(); })) {
      throw InvalidInput(refusals.front());
    }
    std::string reasons;
    for (const report::ServeCandidate& c : out.candidates)
      if (reasons.size() < 600) reasons += fmt::format("; {} × {}: {}", c.gpus, c.device, c.reason);
    throw InvalidInput(fmt::format("{}: runs on none of the deployments compared{}", model.id,
                                   reasons.empty() ? "" : reasons));
  }

  // Rank those meeting the target by energy per output token; list them first.
  std::stable_sort(out.candidates.begin(), out.candidates.end(),
                   [](const report::ServeCandidate& a, const report::ServeCandidate& b) {
                     if (a.meets_target != b.meets_target) return a.meets_target;
                     if (!a.meets_target) return a.runs && !b.runs;
                     return a.result.energy_per_output_token_j < b.result.energy_per_output_token_j;
                   });
  int rank = 0;
  for (report::ServeCandidate& c : out.candidates)
    if (c.meets_target) c.rank = ++rank;

  out.method = method;
  out.notes = model_notes;
  if (q.max_itl_s || q.max_ttft_s) {
    out.notes.push_back(fmt::format(
        "target {}: each deployment at the largest running batch that meets it (batches about "
        "1.5× apart up to the largest that fits); without a target, the largest that fits",
        target_text(q)));
  } else {
    out.notes.push_back(
        "each deployment at the largest running batch that fits (maximum throughput; "
        "--max-itl-ms or --max-ttft-ms set a latency target)");
  }
  out.notes.push_back(
      "GPU counts are tensor-parallel sizes of one replica; energy per token counts every GPU "
      "of the deployment");
  if (left_out > 0) {
    out.notes.push_back(fmt::format(
        "{} GPUs of the catalog left out: they cannot run the weights' format (bf16 needs "
        "Ampere or newer; name them with {} and a precision they run, e.g. fp16)",
        left_out, setting_name(q.names, "devices")));
  }
  if (!q.price_per_gpu_hour.empty()) {
    out.notes.push_back(
        "$ per million output tokens: the given price per GPU-hour × GPUs / output tokens per "
        "hour at the predicted throughput");
  }
  if (q.grid_gco2e_per_kwh) {
    out.notes.push_back(fmt::format(
        "gCO2e per million output tokens: predicted energy × {:g} gCO2e/kWh (the given grid "
        "intensity; {} scope)",
        *q.grid_gco2e_per_kwh, out.power_scope));
  }

  out.context = RunContext::now(q.command_line);
  out.context.add("model", q.model)
      .add("input_tokens", q.input_tokens)
      .add("output_tokens", q.output_tokens)
      .add("workload", std::string(serve::to_string(q.workload)))
      .add("power_scope", out.power_scope);
  return out;
}

}  // namespace nnergy::api
