// libFuzzer target: SQLite dataset files, read as `nnergy dataset validate` and `nnergy dataset
// export` (both tables) read them: DatasetStore::open read-only on a scratch copy of the input,
// learn::validate_networks, dataset::export_csv and dataset::export_published_csv, and the
// store's own listings, among them the typed ops (their JSON columns parsed, as `nnergy train`
// reads them). A file of an older schema version is then opened for writing, as `nnergy dataset
// import` opens it, which migrates the scratch copy, and its ops are read again. SQLite itself is
// not the subject (it is fuzzed upstream); nnergy's handling of odd schemas, types and values in a
// file that passes its schema check is.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "fuzz_support.h"
#include "nnergy/dataset/dataset_export.h"
#include "nnergy/dataset/dataset_schema.h"
#include "nnergy/dataset/dataset_store.h"
#include "nnergy/learn/network_validation.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nnergy::fuzz::ScratchFile file("dataset", ".sqlite", data, size);
  return nnergy::fuzz::run_one("dataset", [&] {
    const nnergy::dataset::DatasetStore store = nnergy::dataset::DatasetStore::open(
        file.path().string(), nnergy::dataset::OpenMode::kReadOnly, /*busy_timeout_ms=*/0);
    std::size_t n =
        store.meta().size() + store.devices().size() + store.sessions().size() + store.ops().size();
    n += nnergy::learn::validate_networks(store).size();
    std::ostringstream out;
    nnergy::dataset::export_csv(store, out);
    nnergy::dataset::export_published_csv(store, out);
    if (store.schema_version() < nnergy::dataset::kDatasetSchemaVersion) {
      const nnergy::dataset::DatasetStore migrated = nnergy::dataset::DatasetStore::open(
          file.path().string(), nnergy::dataset::OpenMode::kReadWrite, /*busy_timeout_ms=*/0);
      n += migrated.ops().size();
    }
    volatile std::size_t sink = n + out.str().size();
    (void)sink;
  });
}
