#include "nnergy/kernel/collective_model.h"

#include <gtest/gtest.h>

#include "nnergy/core/error.h"
#include "toy_device.h"

namespace nnergy::kernel {
namespace {

CollectiveParameters toy_parameters(bool one_shot) {
  CollectiveParameters p;
  p.latency_s = 10e-6;
  p.step_s = 1e-6;
  p.efficiency = 0.5;
  p.one_shot = one_shot;
  return p;
}

TEST(CollectiveModel, ARingAllReduceSendsTwiceTheTensorOverItsSteps) {
  // 8 GPUs, 1 GB: 2·7/8 GB at 50 GB/s, 14 ring steps, the fixed time.
  const CollectiveLink link = collective_link(toy_device(), 8);
  EXPECT_EQ(link.name, "ToyLink");
  EXPECT_DOUBLE_EQ(link.byte_per_s, 100e9);
  const double t =
      collective_time_s({CollectiveOp::kAllReduce, 1e9, 8}, link, toy_parameters(false));
  EXPECT_NEAR(t, 10e-6 + 14e-6 + 2 * 7.0 / 8 * 1e9 / 50e9, 1e-12);
  // All-gather and reduce-scatter send half of it in half the steps; all-to-all in one step.
  EXPECT_NEAR(collective_time_s({CollectiveOp::kAllGather, 1e9, 8}, link, toy_parameters(false)),
              10e-6 + 7e-6 + 7.0 / 8 * 1e9 / 50e9, 1e-12);
  EXPECT_NEAR(collective_time_s({CollectiveOp::kAllToAll, 1e9, 8}, link, toy_parameters(false)),
              10e-6 + 1e-6 + 7.0 / 8 * 1e9 / 50e9, 1e-12);
}

TEST(CollectiveModel, AnEngineAllReduceReadsEveryPeerInOneStepWhenThatIsFaster) {
  const CollectiveLink link = collective_link(toy_device(), 8);
  // 1 KB: one step and 7 KB read beat 14 ring steps.
  const CollectiveShape small{CollectiveOp::kAllReduce, 1024, 8};
  EXPECT_NEAR(collective_time_s(small, link, toy_parameters(true)), 10e-6 + 1e-6 + 7 * 1024 / 50e9,
              1e-12);
  // 1 GB: the ring's 1.75 GB beat the one-shot's 7 GB.
  const CollectiveShape large{CollectiveOp::kAllReduce, 1e9, 8};
  EXPECT_DOUBLE_EQ(collective_time_s(large, link, toy_parameters(true)),
                   collective_time_s(large, link, toy_parameters(false)));
}

TEST(CollectiveModel, BeyondTheFabricItIsPcieAndBeyondAHostItIsRefused) {
  device::DeviceSpec d = toy_device();
  d.interconnect.scale_up_domain_gpus = 2;  // an NVLink bridge
  const CollectiveLink link = collective_link(d, 4);
  EXPECT_TRUE(link.pcie);
  EXPECT_DOUBLE_EQ(link.byte_per_s, 64e9);
  EXPECT_THROW(collective_link(d, 9), InvalidInput);
  EXPECT_THROW(collective_link(d, 1), InvalidInput);
  EXPECT_THROW(predict_collective(toy_device(), {CollectiveOp::kAllReduce, 0, 8}, {}),
               InvalidInput);
}

TEST(CollectiveModel, AnEngineWithoutItsOwnKernelTakesNccls) {
  KernelParameters k;
  k.collective["nccl"]["all-reduce"] = toy_parameters(false);
  const KernelEstimate e =
      predict_collective(toy_device(), {CollectiveOp::kAllReduce, 1e9, 8}, k, "vllm");
  EXPECT_NE(e.parameters.find("nccl all-reduce"), std::string::npos) << e.parameters;
  EXPECT_EQ(e.bound, Bound::kLink);
  EXPECT_GT(e.power_w, 100);
  EXPECT_DOUBLE_EQ(e.energy_j, e.power_w * e.time_s);
  EXPECT_EQ(parse_collective("all_reduce"), CollectiveOp::kAllReduce);
  EXPECT_EQ(parse_collective("AllToAll"), CollectiveOp::kAllToAll);
  EXPECT_FALSE(parse_collective("broadcast"));
}

}  // namespace
}  // namespace nnergy::kernel
