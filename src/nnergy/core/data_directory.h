#pragma once

#include <filesystem>

namespace nnergy {

/// The directory holding nnergy's data (zoo/, devices.json): `$NNERGY_DATA_DIR` when set,
/// else the source tree's data/ that the build was configured from, else `<exe>/../share/nnergy`.
/// Throws InvalidInput when `$NNERGY_DATA_DIR` is set to something that is not a directory.
std::filesystem::path data_directory();

}  // namespace nnergy
