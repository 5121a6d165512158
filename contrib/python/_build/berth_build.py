# SPDX-License-Identifier: MIT
"""The package's own build backend (PEP 517), standard library only.

pip builds a package in an isolated environment into which it installs the
backend's requirements from an index; a setuptools backend therefore needs
network (or --no-build-isolation) on a batch node. This backend needs
nothing: the package is pure Python, so a wheel is a zip of berth/ and three
metadata files, and an sdist a tarball of this directory's sources.
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

NAME = "berth"
SUMMARY = "Client of berthd, the ledger of one batch allocation (standard library only)"
REQUIRES_PYTHON = ">=3.9"
CLASSIFIERS = ("Typing :: Typed", "Operating System :: POSIX :: Linux")
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# what a wheel carries, and an sdist besides the package
PACKAGE_FILES = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.py$|^py\.typed$")
SDIST_EXTRA = ("pyproject.toml", "README.md", "_build/berth_build.py")


def _version():
    """__version__ from the package: one place states it."""
    with open(os.path.join(TOP, NAME, "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if not m:
        raise RuntimeError(f"{NAME}/__init__.py states no __version__ = \"...\"")
    return m.group(1)


def _package_files():
    pkg = os.path.join(TOP, NAME)
    return sorted(f"{NAME}/{n}" for n in os.listdir(pkg)
                  if PACKAGE_FILES.match(n) and os.path.isfile(os.path.join(pkg, n)))


def _metadata(version):
    lines = ["Metadata-Version: 2.1", f"Name: {NAME}", f"Version: {version}",
             f"Summary: {SUMMARY}", f"Requires-Python: {REQUIRES_PYTHON}"]
    lines += [f"Classifier: {c}" for c in CLASSIFIERS]
    return "\n".join(lines) + "\n"


def _dist_info(version):
    wheel = ("Wheel-Version: 1.0\nGenerator: berth_build\nRoot-Is-Purelib: true\n"
             "Tag: py3-none-any\n")
    return {"METADATA": _metadata(version), "WHEEL": wheel, "top_level.txt": NAME + "\n"}


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = _version()
    name = f"{NAME}-{version}.dist-info"
    os.makedirs(os.path.join(metadata_directory, name), exist_ok=True)
    for fname, text in _dist_info(version).items():
        with open(os.path.join(metadata_directory, name, fname), "w", encoding="utf-8") as f:
            f.write(text)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    info = f"{NAME}-{version}.dist-info"
    filename = f"{NAME}-{version}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w",
                         zipfile.ZIP_DEFLATED) as whl:
        members = [(p, open(os.path.join(TOP, p), "rb").read()) for p in _package_files()]
        members += [(f"{info}/{n}", t.encode()) for n, t in _dist_info(version).items()]
        for path, data in members:
            whl.writestr(path, data)
            record.append(_record_line(path, data))
        record.append(f"{info}/RECORD,,")
        whl.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return filename


def build_sdist(sdist_directory, config_settings=None):
    version = _version()
    base = f"{NAME}-{version}"
    filename = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as tar:
        for path in _package_files() + list(SDIST_EXTRA):
            tar.add(os.path.join(TOP, path), arcname=f"{base}/{path}")
        pkg_info = _metadata(version).encode()
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(pkg_info)
        tar.addfile(ti, io.BytesIO(pkg_info))
    return filename
