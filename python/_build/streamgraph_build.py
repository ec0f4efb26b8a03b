"""The package's build backend (PEP 517), in the Python standard library
alone: ``pip install ./python`` needs no network, no setuptools and no
wheel package, and writes nothing into the source tree (no ``build/``, no
``*.egg-info``): the wheel is assembled in the folder pip gives.

A wheel is a zip of the package's files and a ``.dist-info`` folder
(METADATA, WHEEL, RECORD with each file's SHA-256). The package is pure
Python (ctypes); a ``libstreamgraph.so*`` copied into ``streamgraph/``
before installing goes with it (python/README.md, "Installing")."""
import base64
import hashlib
import os
import tarfile
import zipfile

NAME = "streamgraph"
VERSION = "0.1.0"
SUMMARY = ("GPU work as a graph of copies, kernels and host callbacks, over the "
           "streamgraph C library (ctypes)")
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
DIST_INFO = "%s-%s.dist-info" % (NAME, VERSION)
TAG = "py3-none-any"


def _package_files():
    """(path in the wheel, path on disk) of every file the package ships."""
    root = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if os.path.isfile(path) and (name.endswith(".py") or name.startswith("libstreamgraph.so")):
            yield "%s/%s" % (NAME, name), path


def _metadata():
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
            "Requires-Python: >=3.8\nRequires-Dist: numpy\n"
            "Description-Content-Type: text/markdown\n\n%s" % (NAME, VERSION, SUMMARY, readme))


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def _write_wheel(wheel_directory, files):
    """files: (arcname, bytes). Returns the wheel's file name."""
    wheel_name = "%s-%s-%s.whl" % (NAME, VERSION, TAG)
    meta = [(DIST_INFO + "/METADATA", _metadata().encode("utf-8")),
            (DIST_INFO + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: streamgraph_build\n"
                                    "Root-Is-Purelib: true\nTag: %s\n" % TAG).encode())]
    entries = list(files) + meta
    record = "\n".join(_record_line(a, d) for a, d in entries)
    record += "\n%s/RECORD,,\n" % DIST_INFO
    entries.append((DIST_INFO + "/RECORD", record.encode()))
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for arcname, data in entries:
            info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return wheel_name


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# ---- PEP 517 -----------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    folder = os.path.join(metadata_directory, DIST_INFO)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(folder, "WHEEL"), "w") as f:
        f.write("Wheel-Version: 1.0\nGenerator: streamgraph_build\nRoot-Is-Purelib: true\n"
                "Tag: %s\n" % TAG)
    return DIST_INFO


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(a, _read(p)) for a, p in _package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """``pip install -e ./python``: a .pth file that puts python/ on sys.path."""
    return _write_wheel(wheel_directory, [("%s.pth" % NAME, (HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, VERSION)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "README.md", "_build/streamgraph_build.py"]:
            t.add(os.path.join(HERE, rel), arcname="%s/%s" % (base, rel))
        for arcname, path in _package_files():
            t.add(path, arcname="%s/%s" % (base, arcname))
        info = tarfile.TarInfo("%s/PKG-INFO" % base)
        data = _metadata().encode("utf-8")
        info.size = len(data)
        import io
        t.addfile(info, io.BytesIO(data))
    return name
