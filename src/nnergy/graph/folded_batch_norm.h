#pragma once

#include <cstddef>
#include <string>

#include "nnergy/graph/network.h"

namespace nnergy::graph {

/// What the convolutions of a network say about BatchNorm folding.
///
/// An eval-mode ONNX export (torch.onnx.export's default) folds each BatchNorm into the Conv
/// before it: the Conv gains a bias and the BatchNormalization node disappears. The signature
/// left behind — every Conv has a bias and no normalization follows any Conv — is also that of
/// networks that never had BatchNorm (VGG, AlexNet), so it is a hint, never a proof.
struct FoldedBatchNormSignature {
  std::size_t conv_count = 0;         ///< Conv nodes
  std::size_t biased_conv_count = 0;  ///< Conv nodes with a bias input
  /// Conv nodes whose output reaches a BatchNormalization, InstanceNormalization,
  /// GroupNormalization or LayerNormalization node directly or through views and transposes.
  std::size_t normalized_conv_count = 0;
  /// True when conv_count ≥ 2, every Conv has a bias and none is followed by a normalization.
  bool matches = false;
};

/// Looks for the signature of folded BatchNorm in `network`. Pure function of the structure.
FoldedBatchNormSignature detect_folded_batch_norm(const Network& network);

/// The warning for a training prediction of a network whose signature matches: what the
/// prediction lacks and how to export the model with BatchNorm kept.
std::string folded_batch_norm_warning(const FoldedBatchNormSignature& signature);

}  // namespace nnergy::graph
