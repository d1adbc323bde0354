"""Checks W and Q per element of the archline kernels in their PTX (seed 003 §3.3, Eqs. 11-12).

    check_kernel_ptx.py FILE.ptx

For every instantiation of roofline_kernel<T, N> and flop_kernel<T, N> in FILE, the grid-stride
loop body must hold exactly N fused multiply-adds (fma.rn.f32/f64 = 2 flop each) and no other
floating-point arithmetic; the roofline and copy kernels one global load and one global store, the
flop kernel only its (never taken) store, guarded by a comparison of the result (else the compiler
may test the guard once and skip the loop). Prints one line per kernel and exits 1 on a mismatch.
The PTX is what nvcc emits; ptxas may still change the machine code (SASS), which this does not
see.
"""
import re
import sys

KERNEL = re.compile(r"(roofline_kernel|flop_kernel|copy_kernel|baseline_kernel)I([fd])(?:Li(\d+)E)?")
FLOAT_OP = re.compile(r"^\s*(?:@%p\d+\s+)?(add|sub|mul|fma|div|neg|abs|min|max)(?:\.[a-z0-9]+)*\.f(32|64)\b",
                      re.MULTILINE)


def count(body, pattern):
    return len(re.findall(pattern, body, re.MULTILINE))


def main():
    ptx = open(sys.argv[1], encoding="utf-8").read()
    entries = list(re.finditer(r"\.entry\s+(\S+)\(", ptx))
    failures, seen = [], {}
    for k, entry in enumerate(entries):
        kernel = KERNEL.search(entry.group(1))
        if not kernel:
            continue
        kind, dtype, n = kernel.group(1), kernel.group(2), int(kernel.group(3) or 0)
        end = entries[k + 1].start() if k + 1 < len(entries) else len(ptx)
        body = ptx[entry.end():end]
        ops = [m.group(1) for m in FLOAT_OP.finditer(body)]
        fma = ops.count("fma")
        other = len(ops) - fma
        loads = count(body, r"^\s*ld\.global\.")
        stores = count(body, r"^\s*(?:@%p\d+\s+)?st\.global\.")
        expected = {
            "roofline_kernel": (n, 0, 1, 1),
            "flop_kernel": (n, 0, 0, 1),
            "copy_kernel": (0, 0, 1, 1),
            "baseline_kernel": (0, 0, 0, 1),
        }[kind]
        found = (fma, other, loads, stores)
        name = f"{kind}<{'float' if dtype == 'f' else 'double'}{', ' + str(n) if n else ''}>"
        status = "ok" if found == expected else "MISMATCH"
        print(f"{name:34s} fma {fma:5d}  other float ops {other}  global loads {loads}  "
              f"stores {stores}  {status}")
        if found != expected:
            failures.append(f"{name}: expected fma, other, loads, stores = {expected}, found {found}")
        # The flop kernel's store must be guarded by a test of its result: a guard on a kernel
        # argument alone lets the compiler test it once and skip the loop (the H100's machine
        # code did exactly that, and the kernel did no arithmetic).
        if kind == "flop_kernel" and not re.search(r"^\s*setp\.\w+\.f(32|64)\s", body, re.MULTILINE):
            failures.append(f"{name}: the store is not guarded by a comparison of the result x, "
                            "so the multiply-adds may be skipped")
        seen[(kind, dtype)] = seen.get((kind, dtype), 0) + 1
    for kind, per_type in (("roofline_kernel", 11), ("flop_kernel", 11), ("copy_kernel", 1),
                           ("baseline_kernel", 1)):
        for dtype in "fd":
            if seen.get((kind, dtype), 0) != per_type:
                failures.append(f"{kind} ({dtype}): {seen.get((kind, dtype), 0)} instantiations "
                                f"in the PTX, expected {per_type}")
    for f in failures:
        print(f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
