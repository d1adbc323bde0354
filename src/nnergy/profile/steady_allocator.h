#pragma once

#include <string>

/// The host memory allocator's part in a measurement. LibTorch allocates CPU tensors with
/// malloc; glibc returns large freed blocks to the kernel and adapts its thresholds to the
/// allocation history, so an op or network that allocates fresh pages every iteration pays page
/// faults depending on what ran before it. On this project's CPU dataset machine the ResNet-18
/// network took 61 ms per inference after its ops had been measured and 48 ms alone (plain
/// PyTorch: 48 ms), and the sum of its ops was 19 % below the network instead of 5 %.
namespace nnergy::profile {

/// Makes glibc's malloc keep freed memory and reuse it, as a long-running PyTorch process
/// reaches by itself: blocks up to 32 MiB (the largest threshold glibc accepts) come from the
/// heap instead of fresh mappings, and the heap is never trimmed. Larger blocks are still mapped
/// and unmapped. Process-wide and irreversible; not thread-safe with concurrent mallopt calls.
/// Returns a description of what was set ("" when the C library is not glibc or refused).
std::string use_steady_allocator();

}  // namespace nnergy::profile
