#include "nnergy/report/serve_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "nnergy/core/csv.h"
#include "nnergy/report/quantity_format.h"
#include "nnergy/report/text_table.h"

namespace nnergy::report {

namespace {

using json = nlohmann::ordered_json;

std::string billions(double b) { return fmt::format("{:.2f} B", b); }

std::string seconds(double s) { return format_quantity(s, "s"); }

json parts_json(const serve::ServeResult& r) {
  json parts = json::object();
  for (std::size_t i = 0; i < serve::kShareCount; ++i) {
    const auto share = static_cast<serve::Share>(i);
    if (r.shares.energy_j[i] == 0 && r.shares.time_s[i] == 0) continue;
    parts[std::string(serve::to_string(share))] = {{"energy_j", r.shares.energy_j[i]},
                                                   {"time_s", r.shares.time_s[i]}};
  }
  return parts;
}

std::string parallelism(const ServeReport& r) {
  std::string text = fmt::format("{} × {} ({}), tp {}", r.gpus, r.device_id, r.device_name, r.tp);
  if (r.pp > 1) text += fmt::format(", pp {}", r.pp);
  if (r.ep > 1) text += fmt::format(", ep {}", r.ep);
  if (r.replicas > 1) text += fmt::format(", {} replicas", r.replicas);
  return text;
}

}  // namespace

json totals_json(const serve::ServeResult& r) {
  return json{{"batch", r.batch},
              {"energy_per_output_token_j", r.energy_per_output_token_j},
              {"output_tokens_per_s", r.output_tokens_per_s},
              {"output_tokens_per_s_per_gpu", r.output_tokens_per_s_per_gpu},
              {"time_per_output_token_s", r.time_per_output_token_s},
              {"ttft_s", r.ttft_s},
              {"request_latency_s", r.request_latency_s},
              {"energy_per_request_j", r.energy_per_request_j},
              {"avg_power_w", r.avg_power_w},
              {"avg_power_per_gpu_w", r.avg_power_per_gpu_w}};
}

std::string render_text(const ServeReport& r, bool layers) {
  const serve::ServeResult& t = r.result;
  std::string out;
  out += fmt::format("nnergy serve: {} ({})\n", r.model.id, r.model.model_type);
  // Publishers that leave the input embedding (a lookup, no multiplications) out of the active
  // count are compared like for like.
  const bool without_embedding = r.model.published_active_excludes_embedding;
  const double active = static_cast<double>(r.parameters.active) -
                        (without_embedding ? static_cast<double>(r.parameters.embedding) : 0.0);
  out += fmt::format(
      "  parameters {} total{}, layers {}\n", billions(r.parameters.total / 1e9),
      r.model.is_moe()
          ? fmt::format(", {} active{}", billions(active / 1e9),
                        without_embedding ? " (without the input embedding, as published)" : "")
          : std::string(),
      r.model.layer_count());
  out += fmt::format("  deployment {}, {} engine ({}), core clock {:g} MHz\n", parallelism(r),
                     r.engine_id, r.engine_release, r.clock_mhz);
  out += fmt::format("  precision {} weights{}, KV cache {}\n", r.precision,
                     r.weight_only ? fmt::format(" (weight-only: {} math)", r.math)
                                   : fmt::format(" ({} math)", r.math),
                     r.kv_precision);
  out +=
      fmt::format("  workload {}: {:g} prompt + {:g} output tokens per request, batch {:g}{}\n\n",
                  serve::to_string(r.workload), r.input_tokens, r.output_tokens, t.batch,
                  r.workload == serve::Workload::kServing ? " running sequences per replica" : "");

  TextTable totals;
  totals.add_column("quantity", TextTable::Align::kLeft);
  totals.add_column("value", TextTable::Align::kRight);
  totals.add_column("", TextTable::Align::kLeft);
  totals.add_row({"energy per output token", format_quantity(t.energy_per_output_token_j, "J"),
                  fmt::format("{} per request", format_quantity(t.energy_per_request_j, "J"))});
  totals.add_row({"output tokens per second", fmt::format("{:.0f} tokens/s", t.output_tokens_per_s),
                  fmt::format("{:.0f} per GPU", t.output_tokens_per_s_per_gpu)});
  totals.add_row(
      {"time per output token (ITL)", seconds(t.time_per_output_token_s), "one request's tokens"});
  totals.add_row({"time to first token", seconds(t.ttft_s), "whole prompt, once admitted"});
  totals.add_row({"request latency", seconds(t.request_latency_s), "TTFT + output × ITL"});
  totals.add_row({"average power", format_quantity(t.avg_power_w, "W"),
                  fmt::format("{} per GPU, {} scope", format_quantity(t.avg_power_per_gpu_w, "W"),
                              r.power_scope)});
  totals.add_row({"memory per GPU", format_binary_bytes(r.weights_bytes_per_gpu),
                  fmt::format("weights; KV cache {} of {} free, {:g} sequences fit",
                              format_binary_bytes(t.kv_cache_bytes_per_gpu),
                              format_binary_bytes(r.kv_budget_bytes_per_gpu), t.largest_batch)});
  out += fmt::format("Totals (predicted, {}):\n", "analytical model");
  out += totals.render();

  const double request = t.energy_per_request_j > 0 ? t.energy_per_request_j : 1;
  out += fmt::format("\nEnergy per request by phase: prefill {} ({:.0f} %), decode {} ({:.0f} %)\n",
                     format_quantity(t.prefill.energy_j, "J"), 100 * t.prefill.energy_j / request,
                     format_quantity(t.decode.energy_j, "J"), 100 * t.decode.energy_j / request);
  std::string parts;
  double total_parts = 0;
  for (double e : t.shares.energy_j) total_parts += e;
  for (std::size_t i = 0; i < serve::kShareCount; ++i) {
    if (t.shares.energy_j[i] <= 0) continue;
    parts += fmt::format("{}{} {:.0f} %", parts.empty() ? "" : ", ",
                         serve::to_string(static_cast<serve::Share>(i)),
                         100 * t.shares.energy_j[i] / std::max(total_parts, 1e-30));
  }
  out += "Energy by part: " + parts + "\n";

  if (!r.batch_sweep.empty() || !r.clock_sweep.empty()) {
    const bool clocks = !r.clock_sweep.empty();
    TextTable sweep;
    sweep.add_column(clocks ? "clock MHz" : "batch", TextTable::Align::kRight);
    for (const char* h : {"J/token", "tokens/s", "ITL", "TTFT", "power W"})
      sweep.add_column(h, TextTable::Align::kRight);
    const auto& points = clocks ? r.clock_sweep : r.batch_sweep;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const ServeSweepPoint& p = points[i];
      const std::string key =
          clocks ? fmt::format("{:g}{}", p.clock_mhz, r.energy_optimal_clock == i ? " *" : "")
                 : fmt::format("{:g}", p.batch);
      if (!p.fits) {
        sweep.add_row({key, "does not fit", "", "", "", ""});
        continue;
      }
      sweep.add_row({key, format_quantity(p.result.energy_per_output_token_j, "J"),
                     fmt::format("{:.0f}", p.result.output_tokens_per_s),
                     seconds(p.result.time_per_output_token_s), seconds(p.result.ttft_s),
                     fmt::format("{:.0f}", p.result.avg_power_w)});
    }
    out += clocks ? "\nClock sweep (* the energy-optimal clock):\n" : "\nBatch sweep:\n";
    out += sweep.render();
  }

  if (layers && !t.rows.empty()) {
    TextTable ops;
    for (const char* h : {"operation", "count", "time", "energy", "power W", "GFLOP", "MB"})
      ops.add_column(
          h, std::string(h) == "operation" ? TextTable::Align::kLeft : TextTable::Align::kRight);
    for (const serve::OpRow& o : t.rows) {
      ops.add_row({o.name, fmt::format("{:g}", o.count), seconds(o.time_s),
                   format_quantity(o.energy_j, "J"), fmt::format("{:.0f}", o.power_w),
                   fmt::format("{:.3f}", o.flop_count / 1e9),
                   fmt::format("{:.2f}", o.byte_count / 1e6)});
    }
    out += "\nOne decode step, per GPU (each operation once; count = occurrences per step):\n";
    out += ops.render();
  }

  out += "\nNotes:\n";
  out += "  - " + r.method + "\n";
  for (const std::string& n : r.notes) out += "  - " + n + "\n";
  return out;
}

json to_json(const ServeReport& r) {
  const serve::ServeResult& t = r.result;
  json j;
  j["context"] = r.context.to_json();
  j["model"] = {
      {"id", r.model.id},
      {"model_type", r.model.model_type},
      {"source", r.model.source},
      {"layers", r.model.layer_count()},
      {"parameter_count", r.parameters.total},
      {"active_parameter_count", r.parameters.active},
      {"published_total_b", r.model.published_total_b ? json(*r.model.published_total_b) : json()},
      {"published_active_b",
       r.model.published_active_b ? json(*r.model.published_active_b) : json()}};
  j["deployment"] = {{"device", r.device_id},
                     {"device_name", r.device_name},
                     {"gpus", r.gpus},
                     {"tp", r.tp},
                     {"pp", r.pp},
                     {"ep", r.ep},
                     {"replicas", r.replicas},
                     {"precision", r.precision},
                     {"math", r.math},
                     {"weight_only", r.weight_only},
                     {"kv_precision", r.kv_precision},
                     {"engine", r.engine_id},
                     {"engine_release", r.engine_release},
                     {"clock_mhz", r.clock_mhz},
                     {"power_scope", r.power_scope},
                     {"host_power_per_gpu_w", r.host_power_per_gpu_w}};
  j["workload"] = {{"kind", serve::to_string(r.workload)},
                   {"input_tokens", r.input_tokens},
                   {"output_tokens", r.output_tokens}};
  j["totals"] = totals_json(t);
  j["phases"] = {
      {"prefill", {{"energy_per_request_j", t.prefill.energy_j}, {"time_s", t.prefill.time_s}}},
      {"decode", {{"energy_per_request_j", t.decode.energy_j}, {"time_s", t.decode.time_s}}}};
  j["parts"] = parts_json(t);
  j["memory"] = {{"device_bytes", r.device_memory_gib * 1073741824.0},
                 {"weights_bytes_per_gpu", r.weights_bytes_per_gpu},
                 {"kv_budget_bytes_per_gpu", r.kv_budget_bytes_per_gpu},
                 {"kv_cache_bytes_per_gpu", t.kv_cache_bytes_per_gpu},
                 {"largest_batch", t.largest_batch}};
  json ops = json::array();
  for (const serve::OpRow& o : t.rows) {
    ops.push_back({{"name", o.name},
                   {"part", llm::to_string(o.part)},
                   {"count", o.count},
                   {"time_s", o.time_s},
                   {"energy_j", o.energy_j},
                   {"power_w", o.power_w},
                   {"flop_count", o.flop_count},
                   {"byte_count", o.byte_count},
                   {"compute_bound", o.compute_bound}});
  }
  j["operations"] = ops;
  const auto sweep_json = [](const std::vector<ServeSweepPoint>& points) {
    json a = json::array();
    for (const ServeSweepPoint& p : points) {
      json row = {{"batch", p.batch}, {"clock_mhz", p.clock_mhz}, {"fits", p.fits}};
      if (p.fits) row.update(totals_json(p.result));
      a.push_back(row);
    }
    return a;
  };
  j["batch_sweep"] = sweep_json(r.batch_sweep);
  j["clock_sweep"] = sweep_json(r.clock_sweep);
  j["energy_optimal_clock_mhz"] =
      r.energy_optimal_clock ? json(r.clock_sweep[*r.energy_optimal_clock].clock_mhz) : json();
  j["method"] = r.method;
  json notes = json::array();
  for (const std::string& n : r.notes) notes.push_back(n);
  j["notes"] = notes;
  return j;
}

std::string render_csv(const ServeReport& r) {
  std::string out = r.context.to_csv_comments();
  out +=
      "batch,clock_mhz,fits,energy_per_output_token_j,output_tokens_per_s,"
      "output_tokens_per_s_per_gpu,time_per_output_token_s,ttft_s,request_latency_s,"
      "energy_per_request_j,avg_power_w,avg_power_per_gpu_w,sweep\n";
  // `sweep` says which sweep a row belongs to (batch, clock) or none (the single prediction):
  // with --sweep-batch and --sweep-clocks both sweeps are written.
  const auto row = [&](const ServeSweepPoint& p, std::string_view sweep) {
    const serve::ServeResult& t = p.result;
    if (!p.fits) return fmt::format("{},{},false,,,,,,,,,,{}\n", p.batch, p.clock_mhz, sweep);
    return fmt::format("{},{},true,{},{},{},{},{},{},{},{},{},{}\n", t.batch, p.clock_mhz,
                       t.energy_per_output_token_j, t.output_tokens_per_s,
                       t.output_tokens_per_s_per_gpu, t.time_per_output_token_s, t.ttft_s,
                       t.request_latency_s, t.energy_per_request_j, t.avg_power_w,
                       t.avg_power_per_gpu_w, sweep);
  };
  for (const ServeSweepPoint& p : r.batch_sweep) out += row(p, "batch");
  for (const ServeSweepPoint& p : r.clock_sweep) out += row(p, "clock");
  if (r.batch_sweep.empty() && r.clock_sweep.empty()) {
    out += row(ServeSweepPoint{r.result.batch, r.clock_mhz, true, r.result}, "");
  }
  return out;
}

std::string render_text(const std::vector<ModelListing>& models) {
  TextTable t;
  for (const char* h : {"model", "family", "type", "params", "active", "published", "context",
                        "weights", "layers"}) {
    t.add_column(h, std::string(h) == "params" || std::string(h) == "active" ||
                            std::string(h) == "published" || std::string(h) == "context"
                        ? TextTable::Align::kRight
                        : TextTable::Align::kLeft);
  }
  for (const ModelListing& m : models) {
    std::string published = m.published_total_b ? fmt::format("{:g} B", *m.published_total_b) : "";
    if (m.published_active_b) published += fmt::format(" / {:g} B", *m.published_active_b);
    t.add_row({m.id, m.family, m.model_type, fmt::format("{:.2f} B", m.total_b),
               m.active_b < m.total_b ? fmt::format("{:.2f} B", m.active_b) : "", published,
               std::to_string(m.context), m.weight_format, m.layers});
  }
  return t.render() +
         fmt::format(
             "{} models; params computed from each configuration (data/llm/models.json "
             "cites its source); any other decoder: give the path of its config.json\n",
             models.size());
}

json to_json(const std::vector<ModelListing>& models) {
  json a = json::array();
  for (const ModelListing& m : models) {
    a.push_back(
        {{"id", m.id},
         {"family", m.family},
         {"model_type", m.model_type},
         {"parameter_count_b", m.total_b},
         {"active_parameter_count_b", m.active_b},
         {"published_total_b", m.published_total_b ? json(*m.published_total_b) : json()},
         {"published_active_b", m.published_active_b ? json(*m.published_active_b) : json()},
         {"context_tokens", m.context},
         {"weight_format", m.weight_format},
         {"layers", m.layers}});
  }
  return json{{"models", a}};
}

}  // namespace nnergy::report
