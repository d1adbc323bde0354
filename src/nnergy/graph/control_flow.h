#pragma once

// Control flow whose course is known before the network runs, written out as plain nodes: the
// importer's other stages (shape inference, costs) see the operators each iteration runs.
// torch.onnx.export writes `repeat_interleave` with a dynamic size as a Loop over a sequence
// (SplitToSequence, SequenceEmpty, SequenceInsert, ConcatFromSequence), and torchvision's
// detection models guard empty inputs with If nodes whose condition is fixed once every input
// dimension is bound.

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace nnergy::graph {

/// What unroll_control_flow did, for the import notes.
struct ControlFlowReport {
  int loops = 0;       ///< Loop nodes unrolled
  int iterations = 0;  ///< iterations written out in all
  int branches = 0;    ///< If nodes replaced by the branch their constant condition takes
  int sequences = 0;   ///< sequence operators replaced by tensor operators
};

/// Rewrites, in place and in node order: a Loop whose trip count is a constant (a Constant node
/// or an integer initializer, as folding leaves shape arithmetic) and whose continuation
/// condition stays a constant true, as one copy of its body per iteration; an If whose condition
/// is a constant, as the nodes of the branch taken; sequences built from tensors of known count
/// (SequenceEmpty, SequenceConstruct, SplitToSequence with constant or omitted split,
/// SequenceInsert, SequenceAt with a constant position, SequenceLength, ConcatFromSequence) as
/// the tensors themselves (Split, Identity, Unsqueeze + Concat). `shapes` gives the static
/// shapes known so far (SplitToSequence without a split needs its input's). Anything else is
/// left as it is. Returns what was rewritten (all zero: nothing).
ControlFlowReport unroll_control_flow(
    onnx::ModelProto& model, const std::map<std::string, std::vector<std::int64_t>>& shapes);

}  // namespace nnergy::graph
