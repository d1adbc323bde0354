// libFuzzer target: published-measurement files (published::read_published_measurements, the
// reader of `nnergy dataset import` and `evaluate --published`), on a scratch file so that the
// file-reading part runs too; every rejected record's name is formatted as messages do.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "nnergy/published/published_measurement.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nnergy::fuzz::ScratchFile file("published", ".json", data, size);
  return nnergy::fuzz::run_one("published_measurements", [&] {
    const nnergy::published::PublishedReadResult result =
        nnergy::published::read_published_measurements(file.path().string());
    std::size_t n = result.records_read + result.records.size();
    for (const auto& rejected : result.rejected) n += rejected.name().size();
    for (std::size_t i = 1; i < result.records.size(); ++i) {
      n += nnergy::published::differing_fields(result.records[i - 1], result.records[i]).size();
    }
    volatile std::size_t sink = n;
    (void)sink;
  });
}
