#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnergy/graph/data_type.h"

namespace nnergy::device {

/// Arithmetic precision of a run. fp32 and fp64 use the vector (CUDA-core) units; tf32, fp16,
/// bf16, fp8 (e4m3), fp4 (NVFP4/MXFP4) and int8 use the matrix (tensor-core) units for
/// convolutions and GEMMs. The catalog's peaks are keyed by these names (dense peaks).
enum class Precision { kFp32, kFp64, kTf32, kFp16, kBf16, kFp8, kFp4, kInt8 };

/// "fp32", "fp64", "tf32", "fp16", "bf16", "fp8", "fp4", "int8".
std::string_view to_string(Precision precision);
/// Parses the names above and their common spellings, in any ASCII case: "float32" and
/// "float" for fp32, "float64" and "double" for fp64, "float16" and "half" for fp16,
/// "bfloat16" for bf16, "e4m3" and "float8" for fp8 ("FP16", "Half", "BFloat16" all parse). Throws
/// InvalidInput naming `flag` (a flag, a file and column, …) otherwise, with the accepted names
/// and, for a near miss, "did you mean".
Precision parse_precision(std::string_view name, std::string_view flag);
/// A comma-separated list of precisions, each as parse_precision reads it ("fp32, FP64");
/// empty text → {}. Throws InvalidInput naming `flag` for a name that is not a precision.
std::vector<Precision> parse_precision_list(std::string_view text, std::string_view flag);
/// All precisions, in the order above.
const std::vector<Precision>& all_precisions();
/// Element type tensors are stored in at `precision` (tf32 computes on fp32 storage).
graph::DataType storage_type(Precision precision);
/// The precision a run on tensors stored as `type` computes in: fp16, bf16, fp64 or fp32 for
/// those types; nullopt for a type that is not floating-point.
std::optional<Precision> precision_of_storage(graph::DataType type);

}  // namespace nnergy::device
