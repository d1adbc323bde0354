#pragma once

#include <filesystem>

namespace nnergy {

/// The directory holding nnergy's data (zoo/, devices.json): `$NNERGY_DATA_DIR` when set,
/// else `<exe>/../share/nnergy` when installed there, else the source tree's data/ that the build
/// was configured from. (The Python package sets `$NNERGY_DATA_DIR` to its prefix's
/// share/nnergy when it was installed with pip.)
/// Throws InvalidInput when `$NNERGY_DATA_DIR` is set to something that is not a directory.
std::filesystem::path data_directory();

}  // namespace nnergy
