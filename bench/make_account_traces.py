#!/usr/bin/env python3
"""Writes synthetic program traces and a power trace for the accounting scale benchmark
(bench/account_scale.sh). Synthetic, for benchmarking only: the shapes follow what PyTorch's
Kineto profiler and TensorFlow 1's timeline write, the values are made up.

  make_account_traces.py DIR EVENTS

DIR/kineto.json  a Kineto trace (torch.profiler, CPU + CUDA) with about EVENTS trace events: per
                 operator an nn.Module range (python_function), an aten op (cpu_op), its
                 cudaLaunchKernel (cuda_runtime), its kernel (kernel, stream 7) and the two
                 ac2g flow events linking launch and kernel; 12 self-similar layers.
DIR/tf.json      a TensorFlow 1 timeline with about EVENTS events: process_name metadata for the
                 CPU and GPU stream devices, per op a CPU event and a GPU kernel event, args.name
                 scoped ("model/layer_3/MatMul") and args.op.
DIR/counts.txt   the number of trace events in each file ("kineto N", "tf N").
DIR/power.csv    an nnergy power trace (nnergy monitor -o CSV): an NVML source and a RAPL
                 source at 100 Hz each, covering both traces.
"""
import json
import os
import random
import sys

BASE_EPOCH_S = 1_760_000_000.0  # both traces start here (UNIX time)
OPS = [("aten::linear", "ampere_sgemm_128x64_tn"), ("aten::addmm", "ampere_sgemm_64x64_nn"),
       ("aten::relu", "vectorized_elementwise_kernel<relu>"),
       ("aten::add", "vectorized_elementwise_kernel<add>"),
       ("aten::layer_norm", "vectorized_layer_norm_kernel")]


def write_kineto(path, events):
    rng = random.Random(1)
    ops_total = events // 6
    t_us = 1000.0
    pid, tid = 4242, 4242
    with open(path, "w") as f:
        # As Kineto writes it: the base time after the events.
        f.write('{"schemaVersion": 1, "deviceProperties": [],\n"traceEvents": [\n')
        first = True

        def emit(obj):
            nonlocal first
            f.write(("" if first else ",\n") + json.dumps(obj, separators=(",", ":")))
            first = False

        for i in range(ops_total):
            layer = (i // len(OPS)) % 12
            op, kernel = OPS[i % len(OPS)]
            dur = 20.0 + rng.random() * 30.0
            ext = i + 1
            corr = 100000 + i
            emit({"ph": "X", "cat": "python_function", "name": f"nn.Module: Block_{layer}",
                  "pid": pid, "tid": tid, "ts": round(t_us, 3), "dur": round(dur + 10, 3),
                  "args": {"Python id": 7 + layer, "Python parent id": 3}})
            emit({"ph": "X", "cat": "cpu_op", "name": op, "pid": pid, "tid": tid,
                  "ts": round(t_us + 2, 3), "dur": round(dur, 3),
                  "args": {"External id": ext, "Record function id": 0, "Ev Idx": i,
                           "Sequence number": i, "Fwd thread id": 0}})
            emit({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid,
                  "tid": tid, "ts": round(t_us + 4, 3), "dur": 5.0,
                  "args": {"External id": ext, "cbid": 211, "correlation": corr}})
            emit({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7,
                  "ts": round(t_us + 12, 3), "dur": round(dur * 0.8, 3),
                  "args": {"queued": 0, "device": 0, "context": 1, "stream": 7,
                           "correlation": corr, "registers per thread": 96,
                           "shared memory": 16384, "blocks per SM": 1.2,
                           "warps per SM": 9.6, "grid": [128, 1, 1], "block": [256, 1, 1],
                           "est. achieved occupancy %": 19, "External id": ext}})
            emit({"ph": "s", "id": corr, "pid": pid, "tid": tid, "ts": round(t_us + 4, 3),
                  "cat": "ac2g", "name": "ac2g"})
            emit({"ph": "f", "id": corr, "pid": 0, "tid": 7, "ts": round(t_us + 12, 3),
                  "cat": "ac2g", "name": "ac2g", "bp": "e"})
            t_us += dur + 15
        f.write('\n],\n"traceName": "bench", "displayTimeUnit": "ms", "baseTimeNanoseconds": %d}\n'
                % int(BASE_EPOCH_S * 1e9))
    return t_us * 1e-6, ops_total * 6


def write_tf(path, events):
    rng = random.Random(2)
    ops_total = events // 2
    t_us = BASE_EPOCH_S * 1e6 + 1000.0
    tf_ops = ["MatMul", "BiasAdd", "Relu", "Add", "FusedBatchNormV3"]
    with open(path, "w") as f:
        f.write('{"traceEvents": [\n')
        meta = [(0, "/job:localhost/replica:0/task:0/device:CPU:0 Compute"),
                (1, "/job:localhost/replica:0/task:0/device:GPU:0 Compute"),
                (2, "/device:GPU:0/stream:all Compute")]
        f.write(",\n".join(json.dumps({"name": "process_name", "ph": "M", "pid": p,
                                       "args": {"name": n}}) for p, n in meta))
        for i in range(ops_total):
            layer = (i // len(tf_ops)) % 12
            op = tf_ops[i % len(tf_ops)]
            scoped = f"model/layer_{layer}/{op}"
            dur = 20.0 + rng.random() * 30.0
            f.write(",\n" + json.dumps(
                {"ph": "X", "cat": "Op", "name": op, "pid": 1, "tid": 0, "ts": round(t_us, 3),
                 "dur": round(dur, 3), "args": {"name": scoped, "op": op}},
                separators=(",", ":")))
            f.write(",\n" + json.dumps(
                {"ph": "X", "cat": "Op", "name": op, "pid": 2, "tid": 0,
                 "ts": round(t_us + 5, 3), "dur": round(dur * 0.8, 3),
                 "args": {"name": scoped, "op": op}}, separators=(",", ":")))
            t_us += dur + 10
        f.write('\n]}\n')
    return t_us * 1e-6 - BASE_EPOCH_S, len(meta) + ops_total * 2


def write_power(path, span_s):
    rng = random.Random(3)
    with open(path, "w") as f:
        f.write("# tool: nnergy\n# schema_version: 1\n"
                "# command_line: bench/make_account_traces.py (synthetic, for benchmarking)\n"
                "# source: nvml:0|gpu|NVIDIA H100 80GB HBM3|GPU-0|||false|false|true\n"
                "# source: rapl:package-0|cpu-package|package-0||||false|false|true\n")
        f.write("source,time_s,epoch_s,power_w,energy_j,sm_clock_mhz,memory_clock_mhz,"
                "temperature_c,throttle_reasons\n")
        step = 0.01
        n = int((span_s + 1.0) / step) + 1
        for i in range(n):
            t = -0.5 + i * step
            f.write(f"nvml:0,{t:.3f},{BASE_EPOCH_S + t:.3f},{250 + rng.random() * 100:.2f},"
                    ",1980,2619,,0\n")
            f.write(f"rapl:package-0,{t:.3f},{BASE_EPOCH_S + t:.3f},{60 + rng.random() * 20:.2f},"
                    ",,,,0\n")


def main():
    if len(sys.argv) != 3 or not sys.argv[2].isdigit():
        sys.exit(__doc__)
    out, events = sys.argv[1], int(sys.argv[2])
    os.makedirs(out, exist_ok=True)
    span_kineto, count_kineto = write_kineto(os.path.join(out, "kineto.json"), events)
    span_tf, count_tf = write_tf(os.path.join(out, "tf.json"), events)
    write_power(os.path.join(out, "power.csv"), max(span_kineto, span_tf))
    with open(os.path.join(out, "counts.txt"), "w") as f:
        f.write(f"kineto {count_kineto}\ntf {count_tf}\n")


if __name__ == "__main__":
    main()
