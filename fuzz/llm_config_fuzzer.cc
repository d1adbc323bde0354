// libFuzzer target: a language model's config.json as a user hands it to `nnergy serve
// PATH/config.json` (llm::parse_config), then what serve computes from the architecture before
// any device is involved: parameter counts, one prefill chunk's and one decode step's work at
// TP 1 and 2, the memory of one GPU and the KV bytes of a 4096-token sequence.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "nnergy/llm/config_reader.h"
#include "nnergy/llm/step_work.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = nnergy::fuzz::as_text(data, size);
  return nnergy::fuzz::run_one("llm_config", [&] {
    const nnergy::llm::Architecture model = nnergy::llm::parse_config(text, "fuzz config.json");
    const nnergy::llm::ParameterCount count = model.parameters();
    double sink = static_cast<double>(count.total + count.active);
    const nnergy::llm::StepFormats formats;
    nnergy::llm::StepShape shape;
    shape.groups.push_back({4, 1, 1000});   // decode: 4 sequences at 1000 cached tokens
    shape.groups.push_back({1, 256, 512});  // a prefill chunk of 256 tokens after 512
    for (int tp : {1, 2}) {
      nnergy::llm::Sharding sharding;
      sharding.tp = tp;
      // A TP that does not divide the heads is InvalidInput by contract; each is tried alone.
      try {
        const nnergy::llm::StepWork work = nnergy::llm::step_work(model, shape, sharding, formats);
        for (const nnergy::llm::StepOp& op : work.ops) sink += op.count;
        for (const nnergy::llm::Collective& c : work.collectives) sink += c.bytes * c.count;
        const nnergy::llm::MemoryPerGpu memory =
            nnergy::llm::memory_per_gpu(model, sharding, formats);
        sink += memory.weights + memory.kv_per_token + memory.state_per_sequence;
        sink += nnergy::llm::kv_bytes_of_sequence(model, sharding, formats, 4096);
      } catch (const nnergy::InvalidInput&) {
      }
    }
    volatile double keep = sink;
    (void)keep;
  });
}
