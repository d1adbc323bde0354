#!/usr/bin/env python3
"""Fetch the chart libraries that nnergy's HTML reports inline.

    python3 scripts/fetch_report_libraries.py DEST [--lock FILE]

Reads the versions pinned in src/nnergy/report/html/package-lock.json (or --lock FILE), downloads
the vega, vega-lite and vega-embed tarballs from the npm registry, checks each against the
lockfile's integrity hash (sha512) and writes into DEST only what the reports need:

    vega.min.js  vega-lite.min.js  vega-embed.min.js   the minified browser (UMD) bundles
    LICENSE-vega  LICENSE-vega-lite  LICENSE-vega-embed   the package's license text (or, for a
                                                       tarball without one, what its package.json
                                                       declares)
    versions.txt                                       "name version" per line, written last

Python's standard library only; no npm at build time. When DEST already holds the pinned
versions it does nothing. On a network failure or an integrity mismatch it prints one line on
stderr and exits 1, having changed nothing in DEST: every tarball is downloaded and checked
before the first file is written, and each file is written under a temporary name and renamed.
"""

import argparse
import base64
import hashlib
import io
import json
import os
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

# What each package contributes: its minified UMD bundle inside the npm tarball, and the name it
# gets in DEST. The UMD bundles register the globals vega, vegaLite and vegaEmbed; vega-embed's
# bundle includes its own dependencies (vega-tooltip, vega-themes, ...) and needs only the other
# two globals, so the three files load as plain <script> elements in this order.
LIBRARIES = [
    ("vega", "package/build/vega.min.js", "vega.min.js"),
    ("vega-lite", "package/build/vega-lite.min.js", "vega-lite.min.js"),
    ("vega-embed", "package/build/vega-embed.min.js", "vega-embed.min.js"),
]
LICENSE_NAMES = ("package/LICENSE", "package/LICENSE.md", "package/LICENSE.txt")
REGISTRY = "https://registry.npmjs.org"
DEFAULT_LOCK = Path(__file__).resolve().parent.parent / "src/nnergy/report/html/package-lock.json"
TIMEOUT_S = 60
UMASK = os.umask(0)
os.umask(UMASK)


class FetchError(Exception):
    """A failure reported as one line on stderr."""


def pinned_packages(lock_path):
    """[(name, version, tarball URL, integrity)] for LIBRARIES, from an npm v2/v3 lockfile."""
    try:
        lock = json.loads(lock_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise FetchError(f"cannot read the lockfile {lock_path}: {e}") from e
    packages = lock.get("packages", {})
    pinned = []
    for name, _, _ in LIBRARIES:
        entry = packages.get(f"node_modules/{name}")
        if not entry or "version" not in entry or "integrity" not in entry:
            raise FetchError(f"{lock_path} pins no version and integrity for {name}; regenerate it "
                             "with `npm install --package-lock-only --ignore-scripts` in its folder")
        version = entry["version"]
        # npm can be configured to leave out "resolved"; the registry's tarball address is fixed.
        url = entry.get("resolved") or f"{REGISTRY}/{name}/-/{name}-{version}.tgz"
        pinned.append((name, version, url, entry["integrity"]))
    return pinned


def versions_text(pinned):
    return "".join(f"{name} {version}\n" for name, version, _, _ in pinned)


def up_to_date(dest, pinned):
    try:
        current = (dest / "versions.txt").read_text(encoding="utf-8")
    except OSError:
        return False
    files = [out for _, _, out in LIBRARIES] + [f"LICENSE-{name}" for name, _, _ in LIBRARIES]
    return current == versions_text(pinned) and all((dest / f).is_file() for f in files)


def download(name, url):
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            return response.read()
    except urllib.error.HTTPError as e:
        raise FetchError(f"cannot download {name} from {url} (HTTP {e.code} {e.reason}); check that "
                         "the lockfile's \"resolved\" address is right and the npm registry (or its "
                         "proxy) serves it, then run this script again") from e
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", None) or e
        raise FetchError(f"cannot download {name} from {url} ({reason}); check the network access "
                         "to the npm registry (or its proxy), then run this script again") from e


def check_integrity(name, url, data, integrity):
    """`integrity` is a Subresource Integrity string: "sha512-BASE64", possibly several."""
    checked = False
    for item in integrity.split():
        algorithm, _, expected = item.partition("-")
        if algorithm not in ("sha512", "sha384", "sha256"):
            continue
        checked = True
        actual = base64.b64encode(hashlib.new(algorithm, data).digest()).decode("ascii")
        if actual == expected:
            return
    if not checked:
        raise FetchError(f"{name}: the lockfile's integrity '{integrity}' has no sha512/sha384/"
                         "sha256 hash to check; regenerate the lockfile with a current npm")
    raise FetchError(f"{name}: the tarball from {url} does not match the lockfile's integrity "
                     "hash (a corrupted download, a proxy rewriting it, or an edited lockfile); "
                     "run this script again, and if it persists regenerate the lockfile")


def extract(name, url, data, bundle_path):
    """(bundle bytes, license bytes) from the tarball."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            members = {m.name: m for m in tar.getmembers() if m.isfile()}

            def read(path):
                return tar.extractfile(members[path]).read()

            if bundle_path not in members:
                raise FetchError(f"{name}: the tarball from {url} has no {bundle_path}; the "
                                 "package's layout changed: update LIBRARIES in this script")
            license_path = next((p for p in LICENSE_NAMES if p in members), None)
            if license_path is not None:
                return read(bundle_path), read(license_path)
            # Some releases (vega 5.x) ship no license text in their tarball: record what the
            # package declares instead, so that DEST says under which terms the bundle comes.
            meta = json.loads(read("package/package.json"))
            author = meta.get("author")
            if isinstance(author, dict):
                author = author.get("name")
            repository = meta.get("repository")
            if isinstance(repository, dict):
                repository = repository.get("url")
            note = (f"{name} {meta.get('version')}: license {meta.get('license', 'not declared')}, "
                    f"as declared in its package.json (its npm tarball ships no license text).\n"
                    f"Author: {author or 'not declared'}\n"
                    f"Repository: {repository or 'not declared'}\n")
            return read(bundle_path), note.encode("utf-8")
    except (tarfile.TarError, OSError, EOFError, KeyError, ValueError) as e:
        raise FetchError(f"{name}: cannot unpack the tarball from {url} ({e}); run this script "
                         "again") from e


def write_atomically(path, data):
    """Write under a temporary name in the same folder, then rename: never half a file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o666 & ~UMASK)  # mkstemp makes it private; a library is not
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def fetch(dest, lock_path):
    pinned = pinned_packages(lock_path)
    if up_to_date(dest, pinned):
        return f"report libraries in {dest} are up to date: " + \
            ", ".join(f"{n} {v}" for n, v, _, _ in pinned)
    # Everything is downloaded and checked before DEST is touched.
    files = {}
    for (name, version, url, integrity), (_, bundle_path, out) in zip(pinned, LIBRARIES):
        data = download(name, url)
        check_integrity(name, url, data, integrity)
        bundle, license_text = extract(name, url, data, bundle_path)
        files[out] = bundle
        files[f"LICENSE-{name}"] = license_text
    try:
        dest.mkdir(parents=True, exist_ok=True)
        # versions.txt goes first and comes back last: if writing stops half-way, DEST does not
        # claim versions it does not hold, and the next run fetches again.
        (dest / "versions.txt").unlink(missing_ok=True)
        for out, data in files.items():
            write_atomically(dest / out, data)
        write_atomically(dest / "versions.txt", versions_text(pinned).encode("utf-8"))
    except OSError as e:
        raise FetchError(f"cannot write the report libraries into {dest}: {e}") from e
    return f"fetched into {dest}: " + ", ".join(f"{n} {v}" for n, v, _, _ in pinned)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, help="folder to write the libraries into")
    parser.add_argument("--lock", type=Path, default=DEFAULT_LOCK,
                        help="the npm lockfile that pins the versions (default: %(default)s)")
    args = parser.parse_args()
    try:
        print(fetch(args.dest, args.lock))
    except FetchError as e:
        print(f"fetch_report_libraries.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
