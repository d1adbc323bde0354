// Language models without weights: the embedded catalog against its publishers' parameter
// counts, the config.json reader's refusals, name resolution, and the closed forms of one
// step's work (GEMM flops, KV-cache bytes, attention pairs, experts, MLA, collectives).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "json_depth_bomb.h"
#include "nnergy/core/error.h"
#include "nnergy/llm/config_reader.h"
#include "nnergy/llm/model_catalog.h"
#include "nnergy/llm/step_work.h"

namespace nnergy::llm {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kCatalog =
    std::filesystem::path(NNERGY_TEST_DATA_DIR) / "llm" / "models.json";

const ModelCatalog& catalog() {
  static const ModelCatalog c = ModelCatalog::load(kCatalog);
  return c;
}

const Architecture& model(const std::string& id) {
  return catalog().find(id, "test").model->architecture;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(no InvalidInput thrown)";
}

// How far a computed count may be from a published one: 1 %, or one unit of the published
// figure's last digit when it is rounded coarser than that ("3.3" for 3.35 B); a size class
// from the model's name ("Llama 2 70B" holds 68.98 B, "Phi-3-small 7B" 7.39 B) is a label, not
// a count: it only has to be the right class, within 15 %.
constexpr double kCountTolerance = 0.01;
constexpr double kSizeClassTolerance = 0.15;
double allowed(double published, bool size_class) {
  if (size_class) return kSizeClassTolerance * published;
  double unit = 1;
  for (double v = published; std::abs(v - std::round(v)) > 1e-9 && unit > 1e-9; v *= 10) unit /= 10;
  return std::max(kCountTolerance * published, unit);
}

TEST(ModelCatalog, HoldsTheFamiliesServingBenchmarksUse) {
  EXPECT_GE(catalog().models().size(), 40U);
  std::set<std::string> types;
  for (const CatalogModel& m : catalog().models()) types.insert(m.architecture.model_type);
  for (const char* t : {"llama", "llama4_text", "qwen2", "qwen3", "qwen3_moe", "mistral", "mixtral",
                        "gemma2", "gemma3_text", "phi3", "gpt_oss", "deepseek_v3", "nemotron_h"}) {
    EXPECT_EQ(types.count(t), 1U) << t;
  }
  for (const CatalogModel& m : catalog().models()) {
    EXPECT_FALSE(m.architecture.source.empty()) << m.id << " cites no configuration";
  }
}

// Every count within 1 % of its publisher's, or within the rounding the publisher gave it.
TEST(ModelCatalog, ParameterCountsMatchThePublishedOnes) {
  int compared = 0;
  for (const CatalogModel& m : catalog().models()) {
    const Architecture& a = m.architecture;
    const ParameterCount p = a.parameters();
    if (a.published_total_b && !a.published_includes_vision) {
      const double computed = static_cast<double>(p.total) / 1e9;
      EXPECT_NEAR(computed, *a.published_total_b,
                  allowed(*a.published_total_b, a.published_size_class))
          << m.id << " total (" << a.published_source << ")";
      ++compared;
    }
    if (a.published_active_b) {
      const double active =
          static_cast<double>(p.active -
                              (a.published_active_excludes_embedding ? p.embedding : 0)) /
          1e9;
      EXPECT_NEAR(active, *a.published_active_b,
                  allowed(*a.published_active_b, a.published_size_class))
          << m.id << " active (" << a.published_source << ")";
      ++compared;
    }
  }
  EXPECT_GE(compared, 60);
}

TEST(ModelCatalog, ExactFiguresAreMatchedExactly) {
  // Published to the parameter (reports and safetensors metadata): within 0.1 %.
  EXPECT_NEAR(model("EleutherAI/gpt-j-6b").parameters().total / 1e9, 6.053381344, 0.006);
  EXPECT_NEAR(model("EleutherAI/pythia-12b").parameters().total / 1e9, 11.84607232, 0.012);
  EXPECT_NEAR(model("google/codegemma-7b").parameters().total / 1e9, 8.538074112, 0.009);
  EXPECT_EQ(model("meta-llama/Llama-3.1-8B-Instruct").parameters().total, 8030261248);
}

TEST(ModelCatalog, NamesResolveAsUsersTypeThem) {
  EXPECT_EQ(catalog().find("meta-llama/Llama-3.1-8B-Instruct", "m").model->id,
            "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(catalog().find("meta-llama/Meta-Llama-3.1-8B-Instruct", "m").model->id,
            "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(catalog().find("llama-3.1-8b-instruct", "m").model->id,
            "meta-llama/Llama-3.1-8B-Instruct");
  const ResolvedModel fp8 = catalog().find("neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", "m");
  EXPECT_EQ(fp8.model->id, "meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_TRUE(fp8.weight_format.has_value());
  EXPECT_EQ(*fp8.weight_format, "fp8");
  EXPECT_THAT(fp8.note, HasSubstr("fp8 weights, as its name says"));
  EXPECT_EQ(catalog().find("Qwen/Qwen3-30B-A3B-Instruct-2507", "m").model->id,
            "Qwen/Qwen3-30B-A3B-Instruct-2507");
  // A weight-format suffix on a release whose context differs from its base model's: the
  // release, not the base (40,960 tokens), with the format.
  const ResolvedModel release = catalog().find("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "m");
  EXPECT_EQ(release.model->id, "Qwen/Qwen3-30B-A3B-Instruct-2507");
  EXPECT_EQ(release.model->architecture.max_context, 262144);
  EXPECT_EQ(release.weight_format.value_or(""), "fp8");
  const ResolvedModel big = catalog().find("Qwen/Qwen3-235B-A22B-Thinking-2507", "m");
  EXPECT_EQ(big.model->id, "Qwen/Qwen3-235B-A22B-Instruct-2507");
  EXPECT_EQ(big.model->architecture.max_context, 262144);
  // An alias is said.
  EXPECT_THAT(catalog().find("deepseek-ai/DeepSeek-V3", "m").note,
              HasSubstr("taken as deepseek-ai/DeepSeek-R1"));
  EXPECT_THAT(message_of([] { catalog().find("meta-llama/Llama-3.1-8B-Instrukt", "--model"); }),
              HasSubstr("did you mean 'meta-llama/Llama-3.1-8B-Instruct'"));
  EXPECT_THAT(
      message_of([] { catalog().find("nobody/unknown-model", "MODEL"); }),
      HasSubstr("any other decoder can be given as the path of its Hugging Face config.json"));
}

TEST(ConfigReader, RefusesWhatItCannotRead) {
  EXPECT_THAT(message_of([] { parse_config("{", "c.json"); }), HasSubstr("c.json: not valid JSON"));
  EXPECT_THAT(message_of([] { parse_config(R"({"model_type": "t5"})", "c.json"); }),
              HasSubstr("model_type 't5' is not supported (supported: "));
  EXPECT_THAT(message_of([] { parse_config(R"({"model_type": "t5"})", "c.json"); }),
              HasSubstr("llama"));
  EXPECT_THAT(message_of([] { parse_config(R"({"hidden_size": 8})", "c.json"); }),
              HasSubstr("c.json: missing field 'model_type'"));
  EXPECT_THAT(message_of([] {
                parse_config(R"({"model_type": "llama", "vocab_size": 100, "num_hidden_layers": 2,
                         "num_attention_heads": 8, "intermediate_size": 64})",
                             "c.json");
              }),
              HasSubstr("c.json: missing field 'hidden_size' (expected a positive integer)"));
  EXPECT_THAT(message_of([] {
                parse_config(R"({"model_type": "llama", "hidden_size": 64, "vocab_size": 100,
                         "num_hidden_layers": 2, "num_attention_heads": 8,
                         "num_key_value_heads": 3, "intermediate_size": 64})",
                             "c.json");
              }),
              HasSubstr("num_attention_heads 8 is not a multiple of num_key_value_heads 3"));
  EXPECT_THAT(message_of([] {
                parse_config(R"({"model_type": "llama", "hidden_size": "big", "vocab_size": 100,
                         "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 64})",
                             "c.json");
              }),
              HasSubstr("field 'hidden_size': expected a positive integer, found \"big\""));
  EXPECT_THAT(message_of([] {
                parse_config(R"({"model_type": "nemotron_h", "hidden_size": 64, "vocab_size": 100,
                         "num_hidden_layers": 3, "num_attention_heads": 8, "intermediate_size": 64,
                         "hybrid_override_pattern": "M-"})",
                             "c.json");
              }),
              HasSubstr("expected 3 characters (num_hidden_layers)"));
  // Found by fuzzing: a multimodal config whose text_config names its model_type as false.
  EXPECT_THAT(message_of([] {
                parse_config(R"({"model_type": "llama4", "text_config": {"model_type": false}})",
                             "c.json");
              }),
              HasSubstr("c.json: text_config: field 'model_type': expected a string, found false"));
}

TEST(ConfigReader, RefusesALayerCountNoModelHasBeforeWalkingIt) {
  // 10^9 layers took 258 s and 4 GB before its refusal; now refused at once.
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THAT(message_of([] {
                parse_config(R"({"model_type": "llama", "hidden_size": 64, "vocab_size": 100,
                         "num_hidden_layers": 1000000000, "num_attention_heads": 8,
                         "intermediate_size": 64})",
                             "c.json");
              }),
              HasSubstr("c.json: field 'num_hidden_layers': expected at most 1024 layers"));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
}

// Security review: a config.json whose hidden_size is nested 100,000 deep went into the message
// through a recursive dump() and overflowed the stack (SIGSEGV) of `nnergy serve`.
TEST(ConfigReader, RefusesADeeplyNestedConfigBeforeParsingIt) {
  const std::string bomb = R"({"model_type": "llama", "hidden_size": )" +
                           test_support::nested_json_arrays() +
                           R"(, "vocab_size": 100, "num_hidden_layers": 2,
                         "num_attention_heads": 8, "intermediate_size": 64})";
  EXPECT_THAT(message_of([&] { parse_config(bomb, "c.json"); }),
              HasSubstr("c.json: JSON nested deeper than 256 levels"));
}

// A small dense GQA model whose step work has closed forms.
Architecture toy() {
  return parse_config(R"({"model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
      "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2,
      "vocab_size": 1000, "max_position_embeddings": 4096, "tie_word_embeddings": false})",
                      "toy");
}

StepFormats bf16() {
  StepFormats f;
  f.weights.format = WeightFormat::kBf16;
  f.attention_weights = f.weights;
  return f;
}

double matrix_flops(const StepWork& w, const std::string& contains) {
  double flops = 0;
  for (const StepOp& op : w.ops) {
    if (op.name.find(contains) != std::string::npos)
      flops += op.cost.inference.flop_count * op.count;
  }
  return flops;
}

TEST(StepWork, DecodeGemmFlopsAreTwicePerTokenTheWeightsMultiplied) {
  const Architecture m = toy();
  const ParameterCount p = m.parameters();
  StepShape decode;
  decode.groups.push_back({16, 1, 100, true});  // 16 sequences, one token each, 100 cached
  const StepWork w = step_work(m, decode, {}, bf16());
  const double projections = matrix_flops(w, "projection");
  // Per layer: q, k, v, o and the gated MLP; plus the untied lm_head.
  const double per_layer = 256.0 * (8 * 32 + 2 * 2 * 32) + 8 * 32 * 256.0 + 3 * 256.0 * 512;
  EXPECT_DOUBLE_EQ(projections, 2 * 16 * per_layer * 4);
  EXPECT_DOUBLE_EQ(matrix_flops(w, "lm_head"), 2 * 16 * 256.0 * 1000);
  // Everything multiplied per token: the active parameters less the embedding lookup and norms.
  const double norms = 4 * 2 * 256.0 + 256;
  EXPECT_DOUBLE_EQ(projections + matrix_flops(w, "lm_head"),
                   2 * 16 * (static_cast<double>(p.active - p.embedding) - norms));
}

TEST(StepWork, AttentionReadsTheKvCacheOncePerStep) {
  const Architecture m = toy();
  StepShape decode;
  decode.groups.push_back({4, 1, 99, true});
  const StepWork w = step_work(m, decode, {}, bf16());
  // KV cache per token and layer: 2 (K, V) · 2 heads · 32 · 2 bytes = 256 B; 100 tokens each.
  EXPECT_DOUBLE_EQ(kv_bytes_of_sequence(m, {}, bf16(), 100), 4 * 256.0 * 100);
  for (const StepOp& op : w.ops) {
    if (op.name.find("attention (decode") == std::string::npos) continue;
    const double q_and_out = 4 * 1 * 8 * (32 + 32) * 2.0;
    EXPECT_DOUBLE_EQ(op.cost.inference.byte_count, 4 * 100 * 256.0 + q_and_out);
    // Per head and (query, key) pair: 2·32 flops for q·k and 2·32 for p·v.
    EXPECT_DOUBLE_EQ(op.cost.inference.flop_count, 2 * 4 * 100 * 8 * (32 + 32.0));
  }
}

TEST(StepWork, PrefillAttentionIsCausal) {
  const Architecture m = toy();
  StepShape prefill;
  prefill.groups.push_back({1, 512, 0, true});
  const StepWork w = step_work(m, prefill, {}, bf16());
  for (const StepOp& op : w.ops) {
    if (op.name.find("attention (prefill") == std::string::npos) continue;
    const double pairs = 512.0 * 513 / 2;
    EXPECT_DOUBLE_EQ(op.cost.inference.flop_count, 2 * pairs * 8 * 64);
  }
}

TEST(StepWork, MixtureOfExpertsComputesTopKExpertsPerToken) {
  const Architecture& m = model("mistralai/Mixtral-8x7B-Instruct-v0.1");
  StepShape decode;
  decode.groups.push_back({64, 1, 1000, true});
  const StepWork w = step_work(m, decode, {}, bf16());
  const double experts = matrix_flops(w, "experts gate/up") + matrix_flops(w, "experts down");
  EXPECT_DOUBLE_EQ(experts, 2.0 * 64 * 2 * 3 * 4096 * 14336 * 32);
  // 64 tokens choosing 2 of 8 experts touch nearly all 8: E·(1 − (1 − k/E)^T) of them.
  for (const StepOp& op : w.ops) {
    if (op.name.find("experts down") == std::string::npos) continue;
    const double touched = 8 * (1 - std::pow(1 - 2.0 / 8, 64));
    const double weights = touched * 3 * 4096.0 * 14336 * 2 / 3;
    EXPECT_NEAR(op.cost.inference.byte_count, weights + 64 * 2 * (14336.0 + 4096) * 2, 1);
  }
}

TEST(StepWork, LatentAttentionCachesTheLatent) {
  const Architecture& m = model("deepseek-ai/DeepSeek-R1");
  // (kv_lora_rank 512 + rope 64) values per token and layer, 61 layers, fp8 here.
  StepFormats f = bf16();
  f.kv_bytes = 1;
  EXPECT_DOUBLE_EQ(kv_bytes_of_sequence(m, {}, f, 1000), 1000.0 * 576 * 61);
}

TEST(StepWork, TensorParallelAllReducesEachLayersOutputTwice) {
  const Architecture m = toy();
  StepShape decode;
  decode.groups.push_back({8, 1, 10, true});
  const StepWork w = step_work(m, decode, Sharding{2, 1, 1}, bf16());
  double all_reduce_bytes = 0;
  for (const Collective& c : w.collectives) {
    if (c.kind == CollectiveKind::kAllReduce) all_reduce_bytes += c.bytes * c.count;
    EXPECT_EQ(c.group, 2);
  }
  // Attention and MLP outputs per layer, plus the vocabulary-parallel embedding: 8 tokens ·
  // 256 · 2 bytes each.
  EXPECT_DOUBLE_EQ(all_reduce_bytes, (2 * 4 + 1) * 8 * 256 * 2.0);
  // Each GPU holds half the heads' weights.
  EXPECT_DOUBLE_EQ(matrix_flops(w, "qkv projection"), 2 * 8 * 256.0 * (4 + 2 * 1) * 32 * 4);
}

TEST(StepWork, MatrixProductsCarryTheirShapeAndFormatForTheKernelModel) {
  const Architecture m = toy();
  StepShape decode;
  decode.groups.push_back({16, 1, 100, true});
  StepFormats f = bf16();
  f.weights.format = WeightFormat::kFp8;
  f.weights.gemm_input_bytes = 1;
  f.attention_weights = f.weights;
  const StepWork w = step_work(m, decode, Sharding{2, 1, 1}, f);
  int products = 0;
  for (const StepOp& op : w.ops) {
    if (op.cost.op_class != graph::OpClass::kMatrix || op.name.find("attention (") == 0 ||
        op.name.find("(decode") != std::string::npos)
      continue;
    ASSERT_TRUE(op.gemm.has_value()) << op.name;
    ++products;
    // Each product's flops are the kernel's 2·m·n·k·batch.
    EXPECT_DOUBLE_EQ(op.cost.inference.flop_count,
                     2 * op.gemm->m * op.gemm->n * op.gemm->k * op.gemm->batch)
        << op.name;
  }
  EXPECT_EQ(products, 4 + 1);  // qkv, output, gate/up, down (each × 4 layers); the lm_head
  for (const StepOp& op : w.ops) {
    if (op.name.find("qkv projection") != std::string::npos) {
      // 16 tokens × hidden 256 → (4 + 2·1) heads of 32 on each of the two GPUs.
      EXPECT_EQ(op.gemm->m, 16);
      EXPECT_EQ(op.gemm->k, 256);
      EXPECT_EQ(op.gemm->n, 6 * 32);
      EXPECT_EQ(op.gemm_format, kernel::GemmFormat::kFp8);
    }
    if (op.name == "lm_head") {
      EXPECT_EQ(op.gemm_format, kernel::GemmFormat::k16Bit);
    }
    EXPECT_FALSE(op.cost.op_class != graph::OpClass::kMatrix && op.gemm.has_value()) << op.name;
  }
}

TEST(StepWork, ExpertsAreAGroupedGemmOverTheExpertsTheTokensChoose) {
  const Architecture& m = model("mistralai/Mixtral-8x7B-Instruct-v0.1");
  StepShape decode;
  decode.groups.push_back({64, 1, 1000, true});
  const StepWork w = step_work(m, decode, {}, bf16());
  for (const StepOp& op : w.ops) {
    if (op.name.find("experts gate/up") == std::string::npos) continue;
    const double touched = 8 * (1 - std::pow(1 - 2.0 / 8, 64));
    EXPECT_DOUBLE_EQ(op.gemm->batch, touched);
    EXPECT_DOUBLE_EQ(op.gemm->m * op.gemm->batch, 64 * 2);  // token–expert pairs
    EXPECT_EQ(op.gemm->n, 2 * 14336);
  }
}

TEST(StepWork, NoLogitsNoLmHead) {
  // A prefill chunk that is not a prompt's last computes no logits, so no lm_head runs.
  const Architecture m = toy();
  StepShape chunk;
  chunk.groups.push_back({1, 512, 0, false});
  const StepWork w = step_work(m, chunk, {}, bf16());
  EXPECT_EQ(matrix_flops(w, "lm_head"), 0);
}

TEST(WeightFormat, EachFormatRunsTheKernelsEnginesRun) {
  FormatMath f;
  f.format = WeightFormat::kFp8;
  EXPECT_EQ(gemm_format(f), kernel::GemmFormat::kFp8);
  f.weight_only = true;  // an A100: fp8 weights dequantized into 16-bit math
  EXPECT_EQ(gemm_format(f), kernel::GemmFormat::kInt8WeightOnly);
  f = FormatMath{};
  f.format = WeightFormat::kMxFp4;
  EXPECT_EQ(gemm_format(f), kernel::GemmFormat::kInt4WeightOnly);
  f.format = WeightFormat::kNvFp4;
  EXPECT_EQ(gemm_format(f), kernel::GemmFormat::kNvfp4);
  f.format = WeightFormat::kFp16;
  EXPECT_EQ(gemm_format(f), kernel::GemmFormat::k16Bit);
}

}  // namespace
}  // namespace nnergy::llm
