# SPDX-License-Identifier: GPL-2.0-or-later
"""A PEP 517 build backend for the vkcu package, standard library only.

The package is pure Python (ctypes over libvkcu.so), so a wheel is a zip of
vkcu/*.py with its metadata (PEP 427, core metadata 2.1); an sdist is this
folder as a tarball. Because it needs nothing installed, pip's isolated
build environment stays empty and nothing is fetched: `pip install ./python`
works offline.

One thing is added at build time: vkcu/_paths.py, the folders where this
build's libvkcu.so is (the checkout's build/ when the package is built from
a checkout that has one; $VKCU_LIBDIR when set), so that an installed
package finds the library it was built with. The package also looks beside
itself, in $VKCU_LIBRARY and on the loader's path (docs/python.md).
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
TAG = "py3-none-any"


def _project():
    """name, version, summary, requires-python, license, entry points and
    extras of pyproject.toml (tomllib where the interpreter has it; else the
    flat subset this file uses)."""
    path = os.path.join(HERE, "pyproject.toml")
    try:
        import tomllib
        with open(path, "rb") as f:
            return tomllib.load(f)["project"]
    except ImportError:
        pass
    proj, table = {}, None
    for raw in open(path, encoding="utf-8"):
        line = raw.split("#", 1)[0].strip() if not raw.strip().startswith("description") else raw.strip()
        if not line:
            continue
        m = re.fullmatch(r"\[(.+)\]", line)
        if m:
            table = m.group(1)
            continue
        k, _, v = line.partition("=")
        k, v = k.strip().strip('"'), v.strip()
        if v.startswith("["):
            val = re.findall(r'"([^"]*)"', v)
        else:
            val = v.strip('"')
        if table == "project":
            proj[k] = val
        elif table and table.startswith("project."):
            sub = table[len("project."):]
            if sub.startswith("entry-points."):
                proj.setdefault("entry-points", {}).setdefault(sub[len("entry-points."):], {})[k] = val
            else:
                proj.setdefault(sub, {})[k] = val
    return proj


def _dist_info(p):
    return f"{p['name']}-{p['version']}.dist-info"


def _metadata(p):
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p.get('description', '')}", f"License: {p.get('license', '')}",
             f"Requires-Python: {p.get('requires-python', '')}"]
    for extra, reqs in (p.get("optional-dependencies") or {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f"Requires-Dist: {r}; extra == \"{extra}\"" for r in reqs]
    readme = os.path.join(HERE, "README.md")
    body = open(readme, encoding="utf-8").read() if os.path.exists(readme) else ""
    if body:
        lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + body


def _entry_points(p):
    out = []
    for group, items in (p.get("entry-points") or {}).items():
        out.append(f"[{group}]")
        out += [f"{k} = {v}" for k, v in items.items()]
        out.append("")
    return "\n".join(out)


def _paths_module():
    dirs = []
    env = os.environ.get("VKCU_LIBDIR")
    if env:
        dirs.append(os.path.abspath(env))
    build = os.path.join(os.path.dirname(HERE), "build")
    if os.path.exists(os.path.join(build, "libvkcu.so")):  # the link to the soname the build made
        dirs.append(build)
    return ("# SPDX-License-Identifier: GPL-2.0-or-later\n"
            "# Written when the package was built: where that build's libvkcu.so is.\n"
            f"LIBDIRS = {dirs!r}\n")


def _package_files():
    root = os.path.join(HERE, "vkcu")
    for name in sorted(os.listdir(root)):
        if name == "_paths.py" or not (name.endswith(".py") or name == "py.typed"):
            continue
        yield f"vkcu/{name}", open(os.path.join(root, name), "rb").read()
    yield "vkcu/_paths.py", _paths_module().encode()


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory, files):
    p = _project()
    di = _dist_info(p)
    files = list(files) + [
        (f"{di}/METADATA", _metadata(p).encode()),
        (f"{di}/WHEEL", f"Wheel-Version: 1.0\nGenerator: vkcu_backend\nRoot-Is-Purelib: true\nTag: {TAG}\n".encode()),
        (f"{di}/entry_points.txt", _entry_points(p).encode()),
        (f"{di}/top_level.txt", b"vkcu\n"),
    ]
    record = [_record_line(n, d) for n, d in files] + [f"{di}/RECORD,,"]
    files.append((f"{di}/RECORD", ("\n".join(record) + "\n").encode()))
    name = f"{p['name']}-{p['version']}-{TAG}.whl"
    stamp = time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")))[:6]
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files:
            info = zipfile.ZipInfo(n, date_time=stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, d)
    return name


# ---- PEP 517 / PEP 660 hooks ----

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    p = _project()
    di = _dist_info(p)
    os.makedirs(os.path.join(metadata_directory, di), exist_ok=True)
    with open(os.path.join(metadata_directory, di, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(p))
    with open(os.path.join(metadata_directory, di, "entry_points.txt"), "w", encoding="utf-8") as f:
        f.write(_entry_points(p))
    return di


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel whose .pth puts this folder on sys.path (PEP 660)."""
    pth = (HERE + "\n").encode()
    return _write_wheel(wheel_directory, [("vkcu_editable.pth", pth)])


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = f"{p['name']}-{p['version']}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for rel in ["pyproject.toml", "README.md", "_build/vkcu_backend.py"] + [
                f"vkcu/{n}" for n in sorted(os.listdir(os.path.join(HERE, "vkcu")))
                if n != "_paths.py" and (n.endswith(".py") or n == "py.typed")]:
            path = os.path.join(HERE, rel)
            if not os.path.exists(path):
                continue
            data = open(path, "rb").read()
            info = tarfile.TarInfo(f"{base}/{rel}")
            info.size = len(data)
            info.mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
            info.mode = 0o644
            t.addfile(info, io.BytesIO(data))
        pkg_info = _metadata(p).encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        info.mode = 0o644
        t.addfile(info, io.BytesIO(pkg_info))
    return name
