#include "nnergy/calibration/kernel_fit.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "nnergy/calibration/attention_fit.h"
#include "nnergy/calibration/collective_fit.h"
#include "nnergy/core/error.h"

namespace nnergy::calibration {
namespace {

namespace fs = std::filesystem;

const device::DeviceCatalog& catalog() {
  static const device::DeviceCatalog c =
      device::DeviceCatalog::load(fs::path(NNERGY_TEST_DATA_DIR) / "devices.json");
  return c;
}

fs::path scratch(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "nnergy_kernel_fit_test";
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

// Synthetic rows (named as such: times the model itself computes with known parameters) on
// three catalog GPUs: the fit must find those parameters back, and predict each GPU from the
// others' rows within rounding.
TEST(KernelFit, RecoversTheParametersThatMadeSyntheticRows) {
  kernel::GemmParameters truth;
  truth.compute_efficiency = 0.7;
  truth.memory_efficiency = 0.85;
  truth.latency_s = 5e-6;
  truth.k_half = 80;
  truth.tile_exponent = 0.2;
  truth.overlap_loss = 0.15;
  std::vector<MeasuredGemm> rows;
  for (const char* id : {"h100-sxm", "h200", "b200"}) {
    const device::DeviceSpec& d = catalog().find(id);
    for (double m : {1.0, 8.0, 64.0, 257.0, 1024.0, 4096.0, 8193.0}) {
      for (double n : {1024.0, 4096.0, 16384.0}) {
        for (double k : {1024.0, 7168.0}) {
          MeasuredGemm g;
          g.device_id = id;
          g.engine = "tensorrt-llm";
          g.software = "synthetic";
          g.shape = {m, n, k, 1};
          g.latency_s = kernel::gemm_time_s(d, g.shape, g.format, truth, d.clock.boost_mhz);
          rows.push_back(g);
        }
      }
    }
  }
  const KernelFit fit = fit_kernels(rows, {}, catalog());
  const kernel::GemmParameters& p = fit.parameters.gemm.at("tensorrt-llm").at("bf16");
  EXPECT_NEAR(p.compute_efficiency, truth.compute_efficiency, 0.02);
  EXPECT_NEAR(p.memory_efficiency, truth.memory_efficiency, 0.02);
  EXPECT_NEAR(p.latency_s, truth.latency_s, 0.5e-6);
  for (const KernelScore& s : fit.out_of_sample) {
    EXPECT_EQ(s.quantity, "time");
    EXPECT_LT(s.mape, 0.01) << s.device_id;
  }
  EXPECT_EQ(fit.out_of_sample.size(), 3u);
}

// Synthetic GEMMs and memory-bound kernels whose powers the model computes with known power
// parameters: the fit finds the DRAM share back, which the compute-bound GEMMs alone leave
// undetermined.
TEST(KernelFit, StreamingKernelsDetermineTheDramShareOfPower) {
  kernel::KernelParameters truth;
  truth.power.base = 0.3;
  truth.power.compute = 0.6;
  truth.power.memory = 0.5;
  std::vector<MeasuredGemm> rows;
  std::vector<MeasuredStream> streams;
  for (const char* id : {"h200", "b200"}) {
    const device::DeviceSpec& d = catalog().find(id);
    for (double m : {1.0, 4096.0, 8192.0, 16384.0}) {
      for (double n : {4096.0, 8192.0, 16384.0, 32768.0, 65536.0, 131072.0}) {
        MeasuredGemm g;
        g.device_id = id;
        g.engine = "tensorrt-llm";
        g.shape = {m, n, 8192, 64};
        const kernel::KernelEstimate e = kernel::predict_gemm(d, g.shape, g.format, truth);
        g.latency_s = e.time_s;
        g.power_w = e.power_w;
        rows.push_back(g);
      }
    }
    for (double share : {0.1, 0.3, 0.5, 0.7, 0.9}) {
      MeasuredStream s;
      s.device_id = id;
      s.engine = "vllm";
      s.latency_s = 1e-3;
      s.byte_count = share * d.memory_bandwidth_byte_per_s * s.latency_s;
      s.power_w = stream_power_w(s, catalog(), truth.power);
      streams.push_back(s);
    }
  }
  const KernelFit fit = fit_kernels(rows, streams, catalog());
  EXPECT_NEAR(fit.parameters.power.memory, truth.power.memory, 0.02);
  EXPECT_NEAR(fit.parameters.power.base, truth.power.base, 0.02);
  bool scored = false;
  for (const KernelScore& s : fit.out_of_sample) {
    if (s.format != "decode attention") continue;
    scored = true;
    EXPECT_EQ(s.quantity, "power");
    EXPECT_LT(s.mape, 0.01) << s.device_id;
  }
  EXPECT_TRUE(scored);
}

TEST(KernelTables, ReadsDecodeAttentionRowsWithPowerAndNoFlag) {
  const fs::path table = scratch(
      "attention.csv",
      "gpu,precision,kv_dtype,op,batch,seq,kv_len,heads,kv_heads,head_dim,window,latency_us,"
      "tflops,kv_gbps,power_w,power_limit_w,energy_j,software,kernel_source,source_path,qa\n"
      "h200_sxm,bf16,bf16,generation_attention,64,1,4095,32,32,128,0,1005.5,,4271,688.9,700,,"
      "vllm-0.22.0,,,\n"
      "h200_sxm,bf16,bf16,generation_attention,64,1,4095,32,32,128,0,1005.5,,4271,,700,,"
      "vllm-0.22.0,,,\n"
      "b200_sxm,bf16,bf16,generation_attention,64,1,4095,32,32,128,0,10,,9999,500,1000,,"
      "trtllm-1.3.0rc15,,,kv_read_above_peak\n"
      "h200_sxm,bf16,bf16,context_attention,2,4096,4096,32,8,128,0,1000,500,,690,700,,"
      "vllm-0.22.0,,,\n");
  const std::vector<MeasuredStream> rows = read_decode_attention_power(table, catalog());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].device_id, "h200");
  EXPECT_DOUBLE_EQ(rows[0].power_w, 688.9);
  EXPECT_NEAR(rows[0].byte_count, 4271e9 * 1005.5e-6, 1);
  EXPECT_DOUBLE_EQ(rows[0].flop_count, 4.0 * 64 * 32 * 4095 * 128);
}

TEST(KernelTables, ReadsRowsOfKnownGpusAndSkipsTheOthers) {
  const fs::path table =
      scratch("gemm.csv",
              "gpu,precision,op,m,n,k,latency_us,tflops,power_w,power_limit_w,energy_j,software\n"
              "h100_sxm,bf16,gemm,16,4096,4096,12.5,,,,,trtllm-1.3.0rc20\n"
              "b200_sxm,nvfp4,gemm,4096,4096,4096,55,,990,1000,,vllm-0.22.0\n"
              "mi300x,bf16,gemm,16,4096,4096,12.5,,,,,vllm-0.22.0\n");
  int skipped = 0;
  const std::vector<MeasuredGemm> rows = read_gemm_table(table, catalog(), &skipped);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(skipped, 1);
  EXPECT_EQ(rows[0].device_id, "h100-sxm");
  EXPECT_EQ(rows[0].engine, "tensorrt-llm");
  EXPECT_DOUBLE_EQ(rows[0].latency_s, 12.5e-6);
  EXPECT_EQ(rows[1].format, kernel::GemmFormat::kNvfp4);
  EXPECT_EQ(rows[1].engine, "vllm");
  EXPECT_DOUBLE_EQ(*rows[1].power_w, 990);
}

TEST(KernelTables, RefusesAMalformedRowNamingTheLine) {
  const fs::path table = scratch("bad.csv",
                                 "gpu,precision,op,m,n,k,latency_us,software\n"
                                 "h100_sxm,bf16,gemm,16,4096,4096,12.5,trtllm-1.3.0rc20\n"
                                 "h100_sxm,bf16,gemm,16,four,4096,12.5,trtllm-1.3.0rc20\n");
  try {
    read_gemm_table(table, catalog());
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv: line 3: column 'n'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_gemm_table(scratch("nothing.csv", "a,b\n1,2\n"), catalog()), InvalidInput);
  EXPECT_THROW(read_gemm_table("/nonexistent/table.csv.gz", catalog()), InvalidInput);
}

}  // namespace
}  // namespace nnergy::calibration

namespace nnergy::calibration {
namespace {

// Synthetic attention rows (named as such: times the model computes with known parameters) on
// three GPUs: the fit finds the parameters back and predicts each GPU from the others.
TEST(AttentionFit, RecoversTheParametersThatMadeSyntheticRows) {
  kernel::AttentionParameters truth;
  truth.compute_efficiency = 0.55;
  truth.exp_efficiency = 0.9;
  truth.memory_efficiency = 0.85;
  truth.latency_s = 8e-6;
  truth.cta_s = 2e-6;
  truth.overlap_loss = 0.3;
  truth.saturating_ctas = 2;
  std::vector<MeasuredAttention> rows;
  for (const char* id : {"h100-sxm", "h200", "b200"}) {
    const device::DeviceSpec& d = catalog().find(id);
    for (double batch : {1.0, 4.0, 32.0, 256.0}) {
      for (double keys : {128.0, 1024.0, 8192.0}) {
        for (const bool decode : {false, true}) {
          MeasuredAttention a;
          a.device_id = id;
          a.engine = "tensorrt-llm";
          a.software = "synthetic";
          a.shape.phase =
              decode ? kernel::AttentionPhase::kDecode : kernel::AttentionPhase::kPrefill;
          a.shape.batch = batch;
          a.shape.queries = decode ? 1 : keys;
          a.shape.keys = keys;
          a.latency_s = kernel::attention_time_s(d, a.shape, a.format, truth, d.clock.boost_mhz);
          rows.push_back(a);
        }
      }
    }
  }
  KernelFit fit;
  fit_attention(rows, catalog(), fit);
  const kernel::AttentionParameters& decode =
      fit.parameters.attention.at("tensorrt-llm").at("attention decode bf16/bf16");
  EXPECT_NEAR(decode.memory_efficiency, truth.memory_efficiency, 0.03);
  EXPECT_EQ(fit.attention_rows, static_cast<int>(rows.size()));
  ASSERT_EQ(fit.out_of_sample.size(), 6u);  // 3 GPUs × 2 phases
  for (const KernelScore& s : fit.out_of_sample) EXPECT_LT(s.mape, 0.03) << s.device_id << s.format;
  EXPECT_GT(fit.parameters.time_log_sigma.count("attention prefill bf16/bf16"), 0u);
  EXPECT_NE(fit.parameters.accuracy.attention.find("Attention time"), std::string::npos);
}

TEST(KernelTables, ReadsPrefillAndDecodeAttentionRowsWithoutAFlag) {
  const fs::path table = scratch(
      "attention_rows.csv",
      "gpu,precision,kv_dtype,op,batch,seq,kv_len,heads,kv_heads,head_dim,window,latency_us,"
      "tflops,kv_gbps,power_w,power_limit_w,energy_j,software,kernel_source,source_path,qa\n"
      "h200_sxm,bf16,fp8,generation_attention,64,1,4095,32,8,128,0,100,,4271,,700,,"
      "trtllm-1.3.0rc20,,,\n"
      "h200_sxm,fp8,fp8,context_attention,2,4096,4096,32,8,128,0,1000,500,,,700,,"
      "vllm-0.22.0,,,\n"
      "b200_sxm,bf16,bf16,generation_attention,64,1,4095,32,32,128,0,10,,9999,500,1000,,"
      "trtllm-1.3.0rc15,,,kv_read_above_peak\n"
      "mi300x,bf16,bf16,context_attention,2,4096,4096,32,8,128,0,1000,500,,,700,,"
      "vllm-0.22.0,,,\n");
  const std::vector<MeasuredAttention> rows = read_attention_table(table, catalog());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].shape.phase, kernel::AttentionPhase::kDecode);
  EXPECT_DOUBLE_EQ(rows[0].shape.keys, 4096);  // the cache and the new token
  EXPECT_TRUE(rows[0].format.fp8_cache);
  EXPECT_FALSE(rows[0].format.fp8_math);
  EXPECT_EQ(rows[1].engine, "vllm");
  EXPECT_DOUBLE_EQ(rows[1].shape.queries, 4096);
  EXPECT_TRUE(rows[1].format.fp8_math);
}

}  // namespace
// Synthetic collectives (the model's own times with known parameters) on three NVLink GPUs:
// the fit finds the link efficiency back and predicts each GPU from the others.
TEST(CollectiveFit, RecoversTheParametersThatMadeSyntheticRows) {
  kernel::CollectiveParameters truth;
  truth.latency_s = 12e-6;
  truth.step_s = 0.8e-6;
  truth.efficiency = 0.8;
  std::vector<MeasuredCollective> rows;
  for (const char* id : {"h100-sxm", "h200", "b200"}) {
    const device::DeviceSpec& d = catalog().find(id);
    for (int gpus : {2, 4, 8}) {
      for (double bytes = 1024; bytes <= 1e9; bytes *= 8) {
        MeasuredCollective c;
        c.device_id = id;
        c.library = "nccl";
        c.software = "synthetic";
        c.shape = {kernel::CollectiveOp::kAllReduce, bytes, gpus};
        c.latency_s = kernel::collective_time_s(c.shape, kernel::collective_link(d, gpus), truth);
        rows.push_back(c);
      }
    }
  }
  KernelFit fit;
  fit_collectives(rows, catalog(), fit);
  const kernel::CollectiveParameters& p = fit.parameters.collective.at("nccl").at("all-reduce");
  EXPECT_NEAR(p.efficiency, truth.efficiency, 0.01);
  EXPECT_NEAR(p.latency_s, truth.latency_s, 1e-6);
  EXPECT_FALSE(p.one_shot);
  ASSERT_EQ(fit.out_of_sample.size(), 3u);
  for (const KernelScore& s : fit.out_of_sample) EXPECT_LT(s.mape, 0.01) << s.device_id;
  EXPECT_NE(fit.parameters.accuracy.collective.find("Collective time"), std::string::npos);
}

TEST(KernelTables, ReadsGraphCollectivesAndLeavesTheEagerOnesOut) {
  const fs::path table = scratch(
      "comm.csv",
      "gpu,precision,op,num_gpus,message_elems,message_bytes,latency_us,algbw_gbps,software,"
      "kernel_source,source_path\n"
      "h100_sxm,bf16,all_reduce,8,1024,2048,4.6,0.4,vllm-0.24.0,vLLM_custom_graph,x\n"
      "h100_sxm,bf16,all_reduce,8,1024,2048,23.1,0.1,vllm-0.24.0,vLLM_custom_eager,x\n"
      "b200_sxm,fp16,all_gather,4,1024,2048,10.6,0.2,nccl-2.29.2,NCCL,x\n");
  const std::vector<MeasuredCollective> rows = read_collective_table(table, catalog());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].library, "vllm");
  EXPECT_EQ(rows[0].shape.gpus, 8);
  EXPECT_EQ(rows[1].library, "nccl");
  EXPECT_EQ(rows[1].shape.op, kernel::CollectiveOp::kAllGather);
  EXPECT_DOUBLE_EQ(rows[1].latency_s, 10.6e-6);
}

TEST(KernelTables, ReadsPytorchFp32GemmsWithTheReductionWhereNnergyKeepsIt) {
  // NeuSight's (B, M, N)·(N, K): n is the reduction, k the output columns.
  const fs::path table =
      scratch("neusight.csv",
              "gpu,precision,op,batch,m,n,k,latency_us,tflops,gbps,kernel,software,source_path\n"
              "t4,fp32,linear,1,1024,2560,4096,1133.8,11.84,,sgemm,pt2.1.0-cu121,x\n"
              "v100_pcie_32gb,fp32,bmm,12,128,64,128,20.5,1.2,,sgemm,pt2.1.0-cu121,x\n"
              "t4,fp32,softmax,1,1024,1024,1,10,,,softmax,pt2.1.0-cu121,x\n"
              "a40,fp32,linear,1,1024,1024,1024,100,1,,sgemm,pt2.1.0-cu121,x\n");
  const std::vector<MeasuredGemm> rows = read_pytorch_fp32_gemm_table(table, catalog());
  ASSERT_EQ(rows.size(), 2u);  // the softmax and the unmapped GPU left out
  EXPECT_EQ(rows[0].device_id, "t4");
  EXPECT_EQ(rows[0].engine, "pytorch");
  EXPECT_EQ(rows[0].format, kernel::GemmFormat::kFp32);
  EXPECT_DOUBLE_EQ(rows[0].shape.m, 1024);
  EXPECT_DOUBLE_EQ(rows[0].shape.n, 4096);
  EXPECT_DOUBLE_EQ(rows[0].shape.k, 2560);
  EXPECT_EQ(rows[1].device_id, "v100-pcie-32gb");
  EXPECT_DOUBLE_EQ(rows[1].shape.batch, 12);
}

TEST(KernelTables, ReadsMoeLayersWithTheirRouting) {
  const fs::path table = scratch(
      "moe.csv",
      "gpu,precision,op,num_tokens,hidden,inter,topk,num_experts,moe_tp,moe_ep,distribution,"
      "latency_us,tflops,power_w,power_limit_w,energy_j,software,kernel_source,source_path\n"
      "h200_sxm,bf16,moe,4096,4096,14336,2,8,1,1,balanced,3594.7,802.9,690,700,2.48,"
      "trtllm-1.3.0rc20,moe_torch_flow_cutlass,x\n"
      "h200_sxm,bf16,moe,4,4096,14336,2,8,1,1,balanced,90,1,,,,trtllm-1.3.0rc20,"
      "moe_torch_flow_min_latency,x\n"
      "b200_sxm,fp8,moe,64,7168,2048,8,256,1,8,power_law_1.01,120,1,,,,vllm-0.22.0,"
      "vllm_fused_moe,x\n");
  const std::vector<MeasuredMoe> rows = read_moe_table(table, catalog());
  ASSERT_EQ(rows.size(), 2u);  // the min-latency kernel left out
  EXPECT_EQ(rows[0].engine, "tensorrt-llm");
  EXPECT_DOUBLE_EQ(rows[0].shape.inter, 14336);
  EXPECT_DOUBLE_EQ(rows[0].shape.power_law_alpha, 0);
  EXPECT_DOUBLE_EQ(*rows[0].power_w, 690);
  EXPECT_EQ(rows[1].engine, "vllm");
  EXPECT_DOUBLE_EQ(rows[1].shape.ep, 8);
  EXPECT_DOUBLE_EQ(rows[1].shape.power_law_alpha, 1.01);
  EXPECT_FALSE(rows[1].power_w);
}

}  // namespace nnergy::calibration
