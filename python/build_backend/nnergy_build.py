"""The PEP 517 build backend of `pip install .`: builds nnergy with CMake and packs what
`cmake --install` installs into a wheel.

Why a backend of its own (standard library only) rather than scikit-build: pip builds in an
isolated environment and installs the backend's requirements there from PyPI, which a machine
without PyPI cannot reach; Debian 12 packages neither scikit-build-core nor a scikit-build that
works without setup.py. With no requirements, `pip install .` works offline as written. The
wheel is the install tree of CMake's own install rules (the one declaration of what is
installed), zipped as PEP 427 describes.

config settings (pip install . --config-settings KEY=VALUE):
  build-dir   CMake's build folder (default build/pip in the checkout; kept between installs, so a
              second install builds only what changed, and ccache serves a fresh one)
  cmake-args  further CMake arguments, separated by spaces (e.g. -DNNERGY_WITH_TORCH=OFF)
  jobs        parallel build jobs (default: the CPU count)

Installed: the packages nnergy (with its extension nnergy._core) and nnergy_torch into
site-packages, the `nnergy` executable into the environment's bin/, the data (zoo, device
catalog, calibration) into <prefix>/share/nnergy and the LibTorch plugin into
<prefix>/lib/nnergy.
"""

import base64
import hashlib
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import tomllib
import zipfile

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PYTHONDIR = "python"  # NNERGY_INSTALL_PYTHONDIR inside the staging prefix


def _project():
    """name, version and the metadata fields: pyproject.toml's [project] table, the version
    from CMakeLists.txt's project() (declared once, there)."""
    with open(os.path.join(_ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    with open(os.path.join(_ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        match = re.search(r"project\(\s*nnergy\s+VERSION\s+([0-9.]+)", f.read())
    if match is None:
        raise RuntimeError("CMakeLists.txt: expected project(nnergy VERSION x.y.z), found none")
    project["version"] = match.group(1)
    return project


def _metadata(project):
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project['description']}",
        f"Requires-Python: {project['requires-python']}",
    ]
    for dependency in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {dependency}")
    for extra, dependencies in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for dependency in dependencies:
            lines.append(f'Requires-Dist: {dependency}; extra == "{extra}"')
    for label, url in project.get("urls", {}).items():
        lines.append(f"Project-URL: {label}, {url}")
    readme = os.path.join(_ROOT, project.get("readme", "README.md"))
    lines.append("Description-Content-Type: text/markdown")
    with open(readme, encoding="utf-8") as f:
        return "\n".join(lines) + "\n\n" + f.read()


def _tag():
    """cp311-cp311-linux_x86_64 for the interpreter pip runs the backend with."""
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{python}-{python}-{platform}"


def _dist_info(project):
    return f"{project['name']}-{project['version']}.dist-info"


def _dist_info_files(project):
    """{name: text} of the wheel's .dist-info folder, but RECORD."""
    return {"METADATA": _metadata(project),
            "WHEEL": "Wheel-Version: 1.0\nGenerator: nnergy_build\nRoot-Is-Purelib: false\n"
                     f"Tag: {_tag()}\n"}


def _write_dist_info(directory, project):
    dist_info = os.path.join(directory, _dist_info(project))
    os.makedirs(dist_info, exist_ok=True)
    for name, text in _dist_info_files(project).items():
        with open(os.path.join(dist_info, name), "w", encoding="utf-8") as f:
            f.write(text)
    return os.path.basename(dist_info)


def _run(command):
    print("nnergy_build: " + shlex.join(command), file=sys.stderr, flush=True)
    subprocess.run(command, check=True, stdout=sys.stderr)


def _build_and_stage(config_settings, staging):
    settings = config_settings or {}
    build_dir = os.path.abspath(settings.get("build-dir") or os.path.join(_ROOT, "build", "pip"))
    jobs = str(settings.get("jobs") or os.cpu_count() or 2)
    _run(["cmake", "-S", _ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
          "-DNNERGY_BUILD_TESTS=OFF", "-DNNERGY_BUILD_BENCH=OFF",
          f"-DNNERGY_PYTHON_EXECUTABLE={sys.executable}",
          f"-DNNERGY_INSTALL_PYTHONDIR={_PYTHONDIR}",
          *shlex.split(settings.get("cmake-args", ""))])
    cache = os.path.join(build_dir, "CMakeCache.txt")
    with open(cache, encoding="utf-8") as f:
        if not re.search(r"^pybind11_DIR:PATH=(?!.*NOTFOUND)", f.read(), re.M):
            raise RuntimeError("nnergy_build: the Python module needs pybind11 (Debian: "
                               "pybind11-dev python3-dev; scripts/install-deps.sh --main)")
    _run(["cmake", "--build", build_dir, "--parallel", jobs, "--target", "nnergy",
          "nnergy_python"])
    _run(["cmake", "--install", build_dir, "--prefix", staging])


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _wheel_path(staged, project):
    """Where a file of the install tree (relative to the prefix) goes in the wheel: packages at
    the root, bin/ as scripts, the rest (share/, lib/nnergy) as data under the prefix."""
    data = f"{project['name']}-{project['version']}.data"
    parts = staged.split("/")
    if parts[0] == _PYTHONDIR:
        return "/".join(parts[1:])
    if parts[0] == "bin":
        return f"{data}/scripts/" + "/".join(parts[1:])
    return f"{data}/data/" + staged


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    name = f"{project['name']}-{project['version']}-{_tag()}.whl"
    with tempfile.TemporaryDirectory(prefix="nnergy-wheel-") as staging:
        _build_and_stage(config_settings, staging)
        files = {}  # name in the wheel -> contents
        for top, _, names in os.walk(staging):
            for file in names:
                full = os.path.join(top, file)
                with open(full, "rb") as f:
                    files[_wheel_path(os.path.relpath(full, staging), project)] = (
                        f.read(), os.stat(full).st_mode)
        dist_info = _dist_info(project)
        for file, text in _dist_info_files(project).items():
            files[f"{dist_info}/{file}"] = (text.encode(), 0o644)
        record = []
        target = os.path.join(wheel_directory, name)
        partial = target + ".partial"
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as wheel:
            for arcname, (data, mode) in sorted(files.items()):
                info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
                info.external_attr = (mode & 0o777 | 0o100000) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                wheel.writestr(info, data)
                record.append(_record_line(arcname, data))
            record.append(f"{dist_info}/RECORD,,")
            wheel.writestr(f"{dist_info}/RECORD", "\n".join(record) + "\n")
        os.replace(partial, target)
    return name


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _write_dist_info(metadata_directory, _project())


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    """The tracked files of the checkout (git ls-files) under nnergy-VERSION/."""
    import tarfile
    project = _project()
    base = f"{project['name']}-{project['version']}"
    files = subprocess.run(["git", "-C", _ROOT, "ls-files", "-z"], check=True,
                           capture_output=True).stdout.decode().split("\0")
    name = f"{base}.tar.gz"
    partial = os.path.join(sdist_directory, name + ".partial")
    with tarfile.open(partial, "w:gz") as sdist:
        for file in filter(None, files):
            path = os.path.join(_ROOT, file)
            if os.path.isfile(path):
                sdist.add(path, arcname=f"{base}/{file}", recursive=False)
        with tempfile.TemporaryDirectory() as tmp:
            pkg_info = os.path.join(tmp, "PKG-INFO")
            with open(pkg_info, "w", encoding="utf-8") as f:
                f.write(_metadata(project))
            sdist.add(pkg_info, arcname=f"{base}/PKG-INFO")
    os.replace(partial, os.path.join(sdist_directory, name))
    return name

