#include "nnergy/kernel/attention_model.h"

#include <gtest/gtest.h>

#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"
#include "toy_device.h"

namespace nnergy::kernel {
namespace {

using device::Precision;

// η_c = 0.5, η_x = 10, the full bandwidth, no fixed times, no overlap loss, 1 CTA per SM
// saturates DRAM.
AttentionParameters toy_attention() {
  AttentionParameters p;
  p.compute_efficiency = 0.5;
  p.exp_efficiency = 10;
  p.memory_efficiency = 1;
  p.latency_s = 0;
  p.cta_s = 0;
  p.overlap_loss = 0;
  p.saturating_ctas = 1;
  return p;
}

constexpr double kRounding = 1e-9;

AttentionShape shape(AttentionPhase phase, double batch, double queries, double keys, double heads,
                     double kv_heads, double window = 0) {
  AttentionShape s;
  s.phase = phase;
  s.batch = batch;
  s.queries = queries;
  s.keys = keys;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.head_dim = 128;
  s.window = window;
  return s;
}

TEST(AttentionModel, CountsCausalPairsWithCacheAndWindow) {
  // A 4-token prompt: 1 + 2 + 3 + 4.
  EXPECT_DOUBLE_EQ(attention_pairs(shape(AttentionPhase::kPrefill, 1, 4, 4, 1, 1)), 10);
  // Two new tokens after six cached: 7 + 8.
  EXPECT_DOUBLE_EQ(attention_pairs(shape(AttentionPhase::kPrefill, 1, 2, 8, 1, 1)), 15);
  // Eight tokens in a window of 3: 1 + 2 + 3·6.
  EXPECT_DOUBLE_EQ(attention_pairs(shape(AttentionPhase::kPrefill, 1, 8, 8, 1, 1, 3)), 21);
  // Decode: one token after 99 cached sees 100 keys, or the window.
  EXPECT_DOUBLE_EQ(attention_pairs(shape(AttentionPhase::kDecode, 1, 1, 100, 1, 1)), 100);
  EXPECT_DOUBLE_EQ(attention_pairs(shape(AttentionPhase::kDecode, 1, 1, 100, 1, 1, 32)), 32);
}

TEST(AttentionModel, APrefillRunsItsCausalTilesInWavesAtTheTensorAndExponentialRates) {
  // 6400 tokens, one head: 100 query tiles of 64 in one wave over 100 SMs; tile i reads i key
  // blocks of 64, 5050 blocks in all: 64²·5050 padded pairs, each 4·128 flop at 0.5 PFLOP/s
  // and one exponential at 10 · 16 · 100 SMs · 1 GHz.
  const AttentionShape s = shape(AttentionPhase::kPrefill, 1, 6400, 6400, 1, 1);
  const double pairs = 64.0 * 64 * 5050;
  const double expected = 4 * 128 * pairs / 0.5e15 + pairs / (10 * 16 * 100 * 1e9);
  const double t = attention_time_s(toy_device(), s, {}, toy_attention(), 1000);
  EXPECT_NEAR(t, expected, expected * kRounding);
  KernelParameters k;
  k.attention[KernelParameters::kDefaultEngine]["attention prefill bf16/bf16"] = toy_attention();
  k.power.base = 0;  // under the power limit: half the range at full tensor activity
  k.power.compute = 0.5;
  k.power.memory = 0;
  const KernelEstimate e = predict_attention(toy_device(), s, {}, k);
  EXPECT_EQ(e.bound, Bound::kCompute);
  EXPECT_EQ(e.tile_m, 64);
  EXPECT_DOUBLE_EQ(e.waves, 1);
  EXPECT_DOUBLE_EQ(e.wave_utilisation, 1);
  EXPECT_NEAR(e.tile_utilisation, 6400.0 * 6401 / 2 / pairs, 1e-12);
}

TEST(AttentionModel, OneQueryTileMoreThanTheSmsHoldCostsASecondWave) {
  // 6401 tokens need a 101st query tile (one row of it used, 101 key blocks): two waves over
  // 100 SMs, half of the second one busy.
  const AttentionParameters p = toy_attention();
  const double at = attention_time_s(
      toy_device(), shape(AttentionPhase::kPrefill, 1, 6400, 6400, 1, 1), {}, p, 1000);
  const double more = attention_time_s(
      toy_device(), shape(AttentionPhase::kPrefill, 1, 6401, 6401, 1, 1), {}, p, 1000);
  EXPECT_NEAR(more / at, (5151.0 / 5050) * (200.0 / 101), 1e-9);
}

TEST(AttentionModel, DecodeStreamsTheCacheOnceEnoughSequencesKeepTheSmsBusy) {
  // 64 sequences × 8 KV heads = 512 CTAs ≥ 100 SMs: the 16-bit cache of 4096 keys (and the
  // queries and outputs) at the full 1 TB/s.
  const AttentionShape s = shape(AttentionPhase::kDecode, 64, 1, 4096, 32, 8);
  const double bytes = 64 * (32 * 128 * 2 * 2.0 + 4096 * 8 * 128 * 2 * 2.0);
  const double t = attention_time_s(toy_device(), s, {}, toy_attention(), 1000);
  EXPECT_NEAR(t, bytes / 1e12, bytes / 1e12 * kRounding);
  // An fp8 cache reads half the cache bytes.
  const double fp8 = attention_time_s(toy_device(), s, {false, true}, toy_attention(), 1000);
  const double fp8_bytes = 64 * (32 * 128 * 2 * 2.0 + 4096 * 8 * 128 * 2 * 1.0);
  EXPECT_NEAR(fp8, fp8_bytes / 1e12, fp8_bytes / 1e12 * kRounding);
}

TEST(AttentionModel, ASingleShortSequenceCannotSaturateTheBandwidth) {
  // One sequence, one KV head, 256 keys: one split, one CTA of the 100 that saturate DRAM.
  const AttentionShape s = shape(AttentionPhase::kDecode, 1, 1, 256, 1, 1);
  const double bytes = 1 * 128 * 2 * 2.0 + 256 * 128 * 2 * 2.0;
  const double t = attention_time_s(toy_device(), s, {}, toy_attention(), 1000);
  EXPECT_NEAR(t, bytes * 100 / 1e12, bytes * 100 / 1e12 * 1e-6);
}

TEST(AttentionModel, ASlidingWindowCapsTheCacheADecodeStepReads) {
  const AttentionParameters p = toy_attention();
  const double windowed = attention_time_s(
      toy_device(), shape(AttentionPhase::kDecode, 64, 1, 100000, 32, 8, 4096), {}, p, 1000);
  const double full = attention_time_s(
      toy_device(), shape(AttentionPhase::kDecode, 64, 1, 4096, 32, 8), {}, p, 1000);
  EXPECT_NEAR(windowed, full, full * kRounding);
}

TEST(AttentionModel, RefusesWhatNoKernelRuns) {
  const KernelParameters k;
  EXPECT_THROW(predict_attention(toy_device(), shape(AttentionPhase::kDecode, 1, 1, 10, 32, 8),
                                 {true, true}, k),
               InvalidInput);
  EXPECT_THROW(
      predict_attention(toy_device(), shape(AttentionPhase::kPrefill, 1, 10, 10, 32, 6), {}, k),
      InvalidInput);
  EXPECT_THROW(
      predict_attention(toy_device(), shape(AttentionPhase::kPrefill, 1, 20, 10, 32, 8), {}, k),
      InvalidInput);
  EXPECT_THROW(
      predict_attention(toy_device(), shape(AttentionPhase::kPrefill, 0, 10, 10, 32, 8), {}, k),
      InvalidInput);
  device::DeviceSpec no_fp8 = toy_device();
  no_fp8.peak_flop_per_s.erase(Precision::kFp8);
  EXPECT_THROW(predict_attention(no_fp8, shape(AttentionPhase::kPrefill, 1, 10, 10, 32, 8),
                                 {true, false}, k),
               InvalidInput);
}

TEST(AttentionModel, TakesTheNearestFittedFormatAndSaysSo) {
  KernelParameters k;
  AttentionParameters p = toy_attention();
  k.attention["tensorrt-llm"]["attention decode bf16/bf16"] = p;
  std::string from;
  k.attention_for(AttentionPhase::kDecode, {false, true}, "vllm", &from);
  EXPECT_NE(from.find("tensorrt-llm attention decode bf16/bf16"), std::string::npos) << from;
  const KernelParameters back = KernelParameters::parse(k.to_json_text(), "k.json");
  EXPECT_DOUBLE_EQ(
      back.attention.at("tensorrt-llm").at("attention decode bf16/bf16").exp_efficiency, 10);
}

// Measured kernels of AIConfigurator's tables (data/calibration/kernels/aic_attention.csv.gz,
// TensorRT-LLM): the shipped fit within 35 % (the decode fit's held-out MAPE is 20–45 % per
// GPU, prefill 9–13 % on A100 to B200).
TEST(AttentionModel, TheShippedFitPredictsMeasuredAttentionWithinTolerance) {
  const device::DeviceCatalog catalog =
      device::DeviceCatalog::load(std::string(NNERGY_TEST_DATA_DIR) + "/devices.json");
  const KernelParameters k = KernelParameters::load(NNERGY_TEST_DATA_DIR);
  ASSERT_FALSE(k.attention.empty()) << "data/kernel/calibrated.json has no attention fit";
  struct Case {
    const char* device;
    AttentionShape shape;
    double measured_us;
  };
  const Case cases[] = {
      {"h100-sxm", shape(AttentionPhase::kPrefill, 2, 16384, 16384, 64, 8), 16192},
      {"b200", shape(AttentionPhase::kPrefill, 4, 4096, 4096, 32, 8), 647.26},
      {"a100-80gb", shape(AttentionPhase::kPrefill, 8, 2048, 2048, 32, 32), 2429.8},
      {"h200", shape(AttentionPhase::kDecode, 64, 1, 4096, 32, 8), 262.59},
      {"b200", shape(AttentionPhase::kDecode, 8, 1, 8192, 32, 8), 50.117},
  };
  for (const Case& c : cases) {
    const device::DeviceSpec& d = catalog.find(c.device);
    const double t = predict_attention(d, c.shape, {}, k).time_s;
    EXPECT_NEAR(t * 1e6 / c.measured_us, 1.0, 0.35)
        << c.device << " " << to_string(c.shape.phase) << " batch " << c.shape.batch;
  }
}

}  // namespace
}  // namespace nnergy::kernel
