// The serving stage: deployments settled and refused, memory, the workloads' totals and what
// must hold between them (more batch, more throughput; the KV cache read per step; TP halving
// the weights per GPU; weight-only fallbacks said).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "nnergy/core/error.h"
#include "nnergy/device/device_catalog.h"
#include "nnergy/llm/model_catalog.h"
#include "nnergy/llm/step_work.h"
#include "nnergy/serve/deployment.h"
#include "nnergy/serve/engine.h"
#include "nnergy/serve/serving_run.h"

namespace nnergy::serve {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kData = NNERGY_TEST_DATA_DIR;

const device::DeviceCatalog& devices() {
  static const device::DeviceCatalog c = device::DeviceCatalog::load(kData / "devices.json");
  return c;
}
const EngineCatalog& engines() {
  static const EngineCatalog c = EngineCatalog::load(kData);
  return c;
}
const llm::ModelCatalog& models() {
  static const llm::ModelCatalog c = llm::ModelCatalog::load(kData / "llm" / "models.json");
  return c;
}

DeploymentRequest request(const std::string& model, const std::string& device) {
  DeploymentRequest r;
  r.model = &models().find(model, "model").model->architecture;
  r.device = &devices().find(device, "device");
  r.catalog = &devices();
  r.engine = &engines().default_engine();
  r.sequence_tokens = 2000;
  return r;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(no InvalidInput thrown)";
}

RunSettings workload(double in, double out, std::optional<int> batch = std::nullopt) {
  RunSettings s;
  s.input_tokens = in;
  s.output_tokens = out;
  s.batch = batch;
  return s;
}

TEST(Deployment, RefusesParallelismThatDoesNotDivideTheModel) {
  DeploymentRequest r = request("meta-llama/Llama-3.1-8B-Instruct", "h100");
  r.tp = 3;
  EXPECT_THAT(message_of([&] { settle(r); }),
              HasSubstr("--tp 3: meta-llama/Llama-3.1-8B-Instruct has 32 attention heads; expected "
                        "a tensor-parallel size that divides them (1, 2, 4, 8, 16, 32)"));
  r.tp = 4;
  r.gpus = 6;
  EXPECT_THAT(message_of([&] { settle(r); }),
              HasSubstr("--gpus 6: expected a multiple of tp × pp = 4 × 1 = 4"));
  r.gpus.reset();
  r.ep = 2;
  EXPECT_THAT(message_of([&] { settle(r); }), HasSubstr("has no experts"));
}

TEST(Deployment, RefusesAFormatTheGpuCanNeitherComputeNorRunWeightOnly) {
  DeploymentRequest r = request("meta-llama/Llama-3.1-8B-Instruct", "v100-sxm2-32gb");
  r.weights = llm::WeightFormat::kFp8;
  const std::string m = message_of([&] { settle(r); });
  EXPECT_THAT(m, HasSubstr("--precision: the v100-sxm2-32gb"));
  EXPECT_THAT(m, HasSubstr("can neither compute fp8 nor run it weight-only"));
  EXPECT_THAT(m, HasSubstr("h100-sxm"));  // a GPU that can
  r.weights = llm::WeightFormat::kBf16;
  EXPECT_THAT(message_of([&] { settle(r); }), HasSubstr("has no bf16 units; use --precision fp16"));
}

TEST(Deployment, FallsBackToWeightOnlyWhereTheMathIsMissingAndSaysSo) {
  DeploymentRequest r = request("meta-llama/Llama-3.1-8B-Instruct", "a100-80gb");
  r.weights = llm::WeightFormat::kFp8;
  const Deployment d = settle(r);
  EXPECT_TRUE(d.formats.weights.weight_only);
  EXPECT_EQ(d.formats.weights.math, device::Precision::kBf16);
  ASSERT_FALSE(d.notes.empty());
  EXPECT_THAT(d.notes.front(), HasSubstr("weight-only"));
  DeploymentRequest h = request("meta-llama/Llama-3.1-8B-Instruct", "h100");
  h.weights = llm::WeightFormat::kFp8;
  EXPECT_FALSE(settle(h).formats.weights.weight_only);
  EXPECT_EQ(settle(h).formats.weights.math, device::Precision::kFp8);
}

TEST(Deployment, ChoosesTheSmallestTensorParallelSizeThatFits) {
  // 70B in bf16 is 141 GB: one 80 GB GPU cannot hold it; two hold 65.7 GiB each, with the
  // workspace and a few GiB of KV cache (as vLLM serves it on two H100s).
  const Deployment d = settle(request("meta-llama/Llama-3.1-70B-Instruct", "h100"));
  EXPECT_EQ(d.sharding.tp, 2);
  EXPECT_EQ(d.gpus, 2);
  ASSERT_FALSE(d.notes.empty());
  EXPECT_THAT(d.notes.back(), HasSubstr("tensor parallel 2 chosen"));
  DeploymentRequest r = request("meta-llama/Llama-3.1-70B-Instruct", "h100");
  r.tp = 1;
  EXPECT_THAT(message_of([&] { settle(r); }), HasSubstr("needs 131.4 GiB of weights per GPU"));
  EXPECT_THAT(message_of([&] { settle(r); }), HasSubstr("--tp 2 would fit (2 GPUs)"));
}

TEST(Deployment, TensorParallelismHalvesTheWeightsPerGpu) {
  DeploymentRequest r = request("meta-llama/Llama-3.1-8B-Instruct", "h100");
  r.tp = 1;
  const double one = settle(r).memory.weights;
  r.tp = 2;
  EXPECT_NEAR(settle(r).memory.weights, one / 2, 0.01 * one);
  EXPECT_NEAR(one, 8.03e9 * 2, 0.02 * 8.03e9 * 2);
}

TEST(ServingRun, RefusesTokenCountsAndBatchesThatCannotRun) {
  const Deployment d = settle(request("meta-llama/Llama-3.1-8B-Instruct", "h100"));
  EXPECT_THAT(message_of([&] { run(d, workload(0, 10)); }),
              HasSubstr("expected at least 1 prompt token and 1 output token"));
  EXPECT_THAT(message_of([&] { run(d, workload(130000, 2000)); }),
              HasSubstr("beyond meta-llama/Llama-3.1-8B-Instruct's context of 131072 tokens"));
  EXPECT_THAT(message_of([&] { run(d, workload(1000, 1000, 100000)); }),
              HasSubstr("do not fit the KV cache"));
}

TEST(ServingRun, MoreRunningSequencesGiveMoreTokensAndLessEnergyPerToken) {
  const Deployment d = settle(request("meta-llama/Llama-3.1-8B-Instruct", "h100"));
  const ServeResult one = run(d, workload(500, 500, 1));
  const ServeResult many = run(d, workload(500, 500, 64));
  EXPECT_GT(many.output_tokens_per_s, 10 * one.output_tokens_per_s);
  EXPECT_LT(many.energy_per_output_token_j, one.energy_per_output_token_j / 5);
  EXPECT_GT(many.time_per_output_token_s, one.time_per_output_token_s);
  // Batch-1 decode reads every weight per token: at least 16 GB / 3.35 TB/s.
  EXPECT_GT(one.time_per_output_token_s, 16e9 / 3.35e12);
  EXPECT_LT(one.time_per_output_token_s, 3 * 16e9 / 3.35e12);
  // Power per GPU between idle and the board limit.
  EXPECT_GT(many.avg_power_per_gpu_w, 70);
  EXPECT_LE(many.avg_power_per_gpu_w, 700);
  // Energy per request is the energy per token times the tokens; prefill and decode add up.
  EXPECT_NEAR(many.energy_per_request_j, 500 * many.energy_per_output_token_j, 1e-9);
  EXPECT_NEAR(many.prefill.energy_j + many.decode.energy_j, many.energy_per_request_j,
              0.01 * many.energy_per_request_j);
}

TEST(ServingRun, OfflineBatchesPrefillFirstThenDecode) {
  const Deployment d = settle(request("meta-llama/Llama-3.1-8B-Instruct", "h100"));
  RunSettings s = workload(1000, 100, 8);
  s.workload = Workload::kOffline;
  const ServeResult r = run(d, s);
  EXPECT_GT(r.ttft_s, 0);
  EXPECT_NEAR(r.request_latency_s, r.ttft_s + 100 * r.time_per_output_token_s, 1e-9);
  EXPECT_NEAR(r.output_tokens_per_s, 8 * 100 / r.request_latency_s, 0.01 * r.output_tokens_per_s);
}

TEST(ServingRun, WithoutABatchTheLargestThatFitsIsTakenAndSaid) {
  const Deployment d = settle(request("meta-llama/Llama-3.1-8B-Instruct", "h100"));
  const ServeResult r = run(d, workload(1000, 1000));
  EXPECT_TRUE(r.batch_is_largest);
  EXPECT_EQ(r.batch, std::floor(r.largest_batch));
  EXPECT_LE(r.kv_cache_bytes_per_gpu, d.kv_budget_bytes);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_THAT(r.notes.front(), HasSubstr("the largest whose KV cache fits"));
}

TEST(ServingRun, TimeToFirstTokenProcessesTheWholePromptInChunks) {
  // Llama-3.1-8B on one H100, one running sequence with a 32k-token prompt: the prefill alone
  // is 2 × 7.0e9 non-embedding parameters × 32,768 tokens = 4.6e14 FLOP, at least 0.46 s at the
  // 989 TFLOP/s dense bf16 peak (attention adds more). TTFT is the whole prompt in vLLM's
  // 8192-token chunks, as the offline batch of one prefills it, plus half a step.
  const Deployment d = settle(request("meta-llama/Llama-3.1-8B-Instruct", "h100"));
  const ServeResult serving = run(d, workload(32768, 256, 1));
  EXPECT_GT(serving.ttft_s, 2 * 7.0e9 * 32768 / 989e12);
  RunSettings offline = workload(32768, 256, 1);
  offline.workload = Workload::kOffline;
  const double prefill = run(d, offline).ttft_s;
  EXPECT_NEAR(serving.ttft_s, prefill + 0.5 * serving.decode_step_s, 0.05 * prefill);
  // 70B over 8 H100s with 8k prompts: at least 2 × 69e9 × 8192 / (8 × 989e12) = 0.14 s, not
  // one average step (86 ms before).
  DeploymentRequest big = request("meta-llama/Llama-3.1-70B-Instruct", "h100");
  big.tp = 8;
  const ServeResult wide = run(settle(big), workload(8192, 256, 8));
  EXPECT_GT(wide.ttft_s, 2 * 69e9 * 8192 / (8 * 989e12));
}

TEST(ServingRun, TimeToFirstTokenWaitsForThePromptsAheadAtHighLoad) {
  // Short outputs and long prompts at a large batch: several requests finish per step, and a
  // new one waits behind the prompts that arrive with it; said in a note.
  const Deployment d = settle(request("meta-llama/Llama-3.1-8B-Instruct", "h100"));
  const ServeResult light = run(d, workload(2000, 1000, 8));
  const ServeResult heavy = run(d, workload(2000, 20, 128));
  EXPECT_GT(heavy.ttft_s, 2 * light.ttft_s);
  EXPECT_THAT(::testing::PrintToString(heavy.notes), HasSubstr("prefill ahead of a request"));
}

TEST(Deployment, GpusWithoutTpServeReplicasOfTheSmallestThatFits) {
  // Llama-3.1-8B fits one H100: eight GPUs are eight replicas, not one TP-8 group.
  DeploymentRequest r = request("meta-llama/Llama-3.1-8B-Instruct", "h100");
  r.gpus = 8;
  const Deployment d = settle(r);
  EXPECT_EQ(d.sharding.tp, 1);
  EXPECT_EQ(d.replicas, 8);
  EXPECT_THAT(::testing::PrintToString(d.notes), HasSubstr("8 GPUs serve as 8 replicas of 1 GPU"));
  // 70B needs two: four replicas of TP 2.
  DeploymentRequest big = request("meta-llama/Llama-3.1-70B-Instruct", "h100");
  big.gpus = 8;
  const Deployment b = settle(big);
  EXPECT_EQ(b.sharding.tp, 2);
  EXPECT_EQ(b.replicas, 4);
  // Throughput of eight replicas is eight times one GPU's.
  RunSettings s = workload(1000, 1000, 64);
  DeploymentRequest one = request("meta-llama/Llama-3.1-8B-Instruct", "h100");
  EXPECT_NEAR(run(d, s).output_tokens_per_s, 8 * run(settle(one), s).output_tokens_per_s,
              1e-6 * run(d, s).output_tokens_per_s);
  // An explicit --tp still makes one group.
  r.tp = 8;
  EXPECT_EQ(settle(r).replicas, 1);
}

TEST(Deployment, AGpuCountWithoutTpTakesTheFastestSizeThatFits) {
  // DeepSeek-R1 in fp8 on eight B200s: TP 4 holds the weights but leaves room for a few dozen
  // sequences; TP 8 serves far more. The chosen size is the faster, said with the others.
  DeploymentRequest r = request("deepseek-ai/DeepSeek-R1", "b200");
  r.weights = llm::WeightFormat::kFp8;
  r.gpus = 8;
  const RunSettings s = workload(1000, 1000);
  const Deployment chosen = settle_for_throughput(r, s);
  double fastest = 0;
  for (const int tp : {4, 8}) {
    DeploymentRequest fixed = r;
    fixed.tp = tp;
    fastest = std::max(fastest, run(settle(fixed), s).output_tokens_per_s);
  }
  EXPECT_NEAR(run(chosen, s).output_tokens_per_s, fastest, 1e-9 * fastest);
  EXPECT_EQ(chosen.sharding.tp, 8);
  EXPECT_THAT(
      ::testing::PrintToString(chosen.notes),
      HasSubstr("the most output tokens/s of the sizes that fit 8 GPUs (tp 4 × 2 replicas"));
  // Llama-3.1-8B: eight replicas of one GPU stay the fastest.
  DeploymentRequest small = request("meta-llama/Llama-3.1-8B-Instruct", "h100");
  small.gpus = 8;
  EXPECT_EQ(settle_for_throughput(small, s).replicas, 8);
}

TEST(Deployment, Fp8WeightsKeepActivationsCollectivesAndStatesIn16Bits) {
  DeploymentRequest r = request("meta-llama/Llama-3.1-70B-Instruct", "h100");
  r.tp = 4;
  const Deployment bf16 = settle(r);
  r.weights = llm::WeightFormat::kFp8;
  const Deployment fp8 = settle(r);
  EXPECT_EQ(fp8.formats.activation_bytes, 2);
  EXPECT_EQ(fp8.formats.communication_bytes, 2);
  EXPECT_EQ(fp8.formats.state_bytes, 2);
  EXPECT_EQ(fp8.formats.weights.gemm_input_bytes, 1);  // W8A8: the products read fp8 inputs
  EXPECT_EQ(fp8.formats.kv_bytes, 2);                  // bf16 KV cache unless asked
  // The all-reduces carry the same bytes in both; the products read less.
  llm::StepShape shape;
  shape.groups.push_back(llm::SequenceGroup{64, 1, 2000, true});
  const llm::StepWork a = llm::step_work(*bf16.model, shape, bf16.sharding, bf16.formats);
  const llm::StepWork b = llm::step_work(*fp8.model, shape, fp8.sharding, fp8.formats);
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (std::size_t i = 0; i < a.collectives.size(); ++i)
    EXPECT_EQ(a.collectives[i].bytes, b.collectives[i].bytes) << a.collectives[i].name;
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    if (a.ops[i].name.find("norm") != std::string::npos) {
      EXPECT_EQ(a.ops[i].cost.inference.byte_count, b.ops[i].cost.inference.byte_count)
          << a.ops[i].name;
    }
  }
}

TEST(Deployment, MambaStatesAreTheSameSizeWhateverTheWeights) {
  // Nemotron-Nano-9B-v2's Mamba states stay 16-bit under fp8 weights: the sequences that fit
  // grow only by the weights' bytes saved, not twofold.
  DeploymentRequest r = request("nvidia/NVIDIA-Nemotron-Nano-9B-v2", "h100");
  const Deployment bf16 = settle(r);
  r.weights = llm::WeightFormat::kFp8;
  const Deployment fp8 = settle(r);
  EXPECT_EQ(fp8.memory.state_per_sequence, bf16.memory.state_per_sequence);
  const double grows = fp8.sequences_that_fit(2000) / bf16.sequences_that_fit(2000);
  EXPECT_GT(grows, 1.0);
  EXPECT_LT(grows, 1.4);
}

TEST(ServingRun, Nvfp4IsFasterThanFp8OnBlackwell) {
  // DeepSeek-R1 on eight B200s: nvfp4 reads less of every weight and product input than fp8.
  DeploymentRequest r = request("deepseek-ai/DeepSeek-R1", "b200");
  r.tp = 8;
  r.weights = llm::WeightFormat::kFp8;
  const double fp8 = run(settle(r), workload(1000, 1000, 64)).output_tokens_per_s;
  r.weights = llm::WeightFormat::kNvFp4;
  const double fp4 = run(settle(r), workload(1000, 1000, 64)).output_tokens_per_s;
  EXPECT_GT(fp4, fp8);
}

const kernel::KernelParameters& kernels() {
  static const kernel::KernelParameters k = kernel::KernelParameters::load(kData);
  return k;
}

TEST(ServingRun, TheKernelModelCostsTheMatrixProducts) {
  // Batch-1 decode of Llama-3.1-8B on an H100 streams its 16 GB of weights per token: with the
  // fitted kernel model (weights at its η_m of 3.35 TB/s) within 5.5–9 ms per token (engines
  // reach 6–7 ms), faster than the analytical model's efficiencies alone give.
  DeploymentRequest r = request("meta-llama/Llama-3.1-8B-Instruct", "h100-sxm");
  const double analytical = run(settle(r), workload(1000, 1000, 1)).decode_step_s;
  r.kernels = &kernels();
  const ServeResult with_kernels = run(settle(r), workload(1000, 1000, 1));
  EXPECT_GT(with_kernels.decode_step_s, 5.5e-3);
  EXPECT_LT(with_kernels.decode_step_s, 9e-3);
  EXPECT_NE(with_kernels.decode_step_s, analytical);
  // Board power stays within the GPU's idle and its limit.
  EXPECT_GT(with_kernels.avg_power_w, r.device->idle_w);
  EXPECT_LE(with_kernels.avg_power_w, r.device->tdp_w);
}

TEST(ServingRun, TheKernelModelRunsSixteenBitOnFp16OnlyGpus) {
  // A V100 has fp16 units but no bf16: its 16-bit products run on fp16.
  DeploymentRequest r = request("meta-llama/Llama-3.1-8B-Instruct", "v100-sxm2-32gb");
  r.weights = llm::WeightFormat::kFp16;
  r.kernels = &kernels();
  EXPECT_GT(run(settle(r), workload(500, 500, 8)).output_tokens_per_s, 0);
}

TEST(EngineCatalog, NamesTheReleaseOfEachEngine) {
  for (const EngineProfile& e : engines().engines()) {
    EXPECT_FALSE(e.release.empty()) << e.id;
    EXPECT_FALSE(e.source.empty()) << e.id;
  }
  EXPECT_EQ(engines().default_engine().id, "vllm");
  EXPECT_EQ(engines().find("TRT-LLM", "--engine").id, "tensorrt-llm");
  EXPECT_THAT(message_of([] { engines().find("vlm", "--engine"); }),
              HasSubstr("did you mean 'vllm'"));
}

}  // namespace
}  // namespace nnergy::serve
