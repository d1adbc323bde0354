"""`pip install .` as a Python user does it, from a clean copy of the checkout:

  1. copy the checkout's files (git ls-files: tracked and new, not ignored; no build folders),
  2. make a virtual environment with --system-site-packages (Debian's torch and pandas),
  3. `pip install .` in the copy (the CMake build serves its objects from ccache when the CI
     build compiled them with the same flags, hence -DNNERGY_WERROR=ON),
  4. delete the copy, so that nothing can be read from it,
  5. run `nnergy predict` from the environment's bin/ and `nnergy.predict` from its python, in a
     folder of their own, and check that they give the build tree's answers (its `nnergy predict
     --json`, and its module's to_dict()).

usage: pip_install_test.py CHECKOUT BUILT_NNERGY BUILT_PYTHON_DIR
(exit 0 on success; what failed on stderr)
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REQUEST = ["predict", "resnet50", "--device", "a100-40gb", "--batch", "8", "--json"]
SCRIPT = ("import json, nnergy; p = nnergy.predict('resnet50', device='a100-40gb', batch=8); "
          "print(json.dumps({'file': nnergy.__file__, 'doc': p.to_dict()}))")


def run(command, **kwargs):
    print("+ " + " ".join(command), flush=True)
    return subprocess.run(command, check=True, **kwargs)


def copy_checkout(checkout, destination):
    files = subprocess.run(
        ["git", "-C", checkout, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True, capture_output=True).stdout.decode().split("\0")
    copied = 0
    for file in filter(None, files):
        source = os.path.join(checkout, file)
        if not os.path.isfile(source):  # deleted in the working tree
            continue
        target = os.path.join(destination, file)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(source, target)
        copied += 1
    return copied


def figures(document):
    """The answer of a predict document: all but where, when and by what it was made (the
    context's command line, date, version and file paths)."""
    document = json.loads(json.dumps(document))
    context = document["context"]
    for key in ("command_line", "date_utc", "tool_version"):
        context.pop(key, None)
    context["network"].pop("source", None)
    context["device"].pop("catalog", None)
    return document


def main():
    checkout, built_nnergy, built_python = sys.argv[1:4]
    expected_cli = figures(json.loads(run([built_nnergy, *REQUEST], capture_output=True).stdout))
    expected_python = figures(json.loads(run(
        ["/usr/bin/python3", "-c", SCRIPT], capture_output=True,
        env=dict(os.environ, PYTHONPATH=built_python)).stdout)["doc"])
    with tempfile.TemporaryDirectory(prefix="nnergy-pip-") as tmp:
        source = os.path.join(tmp, "nnergy")
        print(f"copied {copy_checkout(checkout, source)} files of {checkout}")
        venv = os.path.join(tmp, "venv")
        run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv])
        started = time.monotonic()
        run([os.path.join(venv, "bin", "pip"), "install", "--no-index", "--quiet", ".",
             "--config-settings=cmake-args=-DNNERGY_WERROR=ON -DNNERGY_REQUIRE_HTML_REPORTS=ON"],
            cwd=source)
        print(f"pip install . took {time.monotonic() - started:.0f} s")
        shutil.rmtree(source)

        elsewhere = os.path.join(tmp, "elsewhere")
        os.makedirs(elsewhere)
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "NNERGY_DATA_DIR", "NNERGY_BIN")}
        cli = json.loads(run([os.path.join(venv, "bin", "nnergy"), *REQUEST], cwd=elsewhere,
                             env=env, capture_output=True).stdout)
        python = json.loads(run([os.path.join(venv, "bin", "python"), "-c", SCRIPT],
                                cwd=elsewhere, env=env, capture_output=True).stdout)
        site = os.path.join(venv, "lib")
        failures = []
        if not python["file"].startswith(site):
            failures.append(f"import nnergy: expected the installed package under {site}, "
                            f"found {python['file']}")
        zoo = cli["context"]["network"]["source"]
        if not zoo.startswith(os.path.join(venv, "share", "nnergy")):
            failures.append(f"nnergy predict: expected the zoo of {venv}/share/nnergy, found {zoo}")
        if figures(cli) != expected_cli:
            failures.append("nnergy predict --json of the installed package differs from the "
                            "build tree's")
        if figures(python["doc"]) != expected_python:
            failures.append("nnergy.predict(...).to_dict() of the installed package differs from "
                            "the build tree's")
        for failure in failures:
            print("FAILED: " + failure, file=sys.stderr)
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
