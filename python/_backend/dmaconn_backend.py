"""A PEP 517 build backend for dmaconn, on the standard library alone.

Builds need nothing beyond Python, so ``pip install ./python`` works offline
(no build requirements to download).  Shared libraries copied into
``dmaconn/`` (``libdmaconn*.so*``) go into the wheel, which is then tagged
for this platform.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import sysconfig
import tarfile
import zipfile
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "dmaconn"


# ---------------------------------------------------------------- metadata


def _project() -> Dict[str, object]:
    """The [project] table of pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib  # Python 3.11+
    except ImportError:
        return _parse_project(text)
    return tomllib.loads(text)["project"]


def _parse_project(text: str) -> Dict[str, object]:
    """Enough TOML for the [project] table: strings and lists of strings."""
    project: Dict[str, object] = {}
    section = ""
    lines = iter(text.splitlines())
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line.strip("[]").strip()
            continue
        if section != "project" or "=" not in line:
            continue
        key, _, value = (part.strip() for part in line.partition("="))
        if value.startswith("["):
            while not value.rstrip().endswith("]"):
                value += next(lines).strip()
            project[key] = re.findall(r'"((?:[^"\\]|\\.)*)"', value)
        else:
            project[key] = value.strip('"')
    return project


def _dist_name(project: Dict[str, object]) -> str:
    return re.sub(r"[-_.]+", "_", str(project["name"])).lower()


def _metadata(project: Dict[str, object]) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
    ]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    for classifier in project.get("classifiers", []):  # type: ignore[union-attr]
        lines.append(f"Classifier: {classifier}")
    body = ""
    readme = project.get("readme")
    if isinstance(readme, str) and (ROOT / readme).is_file():
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + (ROOT / readme).read_text(encoding="utf-8")
    return "\n".join(lines) + "\n" + body


def _libraries() -> List[Path]:
    return sorted(p for p in (ROOT / PACKAGE).glob("libdmaconn*.so*") if p.is_file())


def _tag(editable: bool = False) -> Tuple[str, bool]:
    """The wheel tag and whether the wheel is pure Python."""
    if _libraries() and not editable:
        platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
        return f"py3-none-{platform}", False
    return "py3-none-any", True


def _wheel_file(editable: bool = False) -> str:
    tag, pure = _tag(editable)
    return (
        "Wheel-Version: 1.0\n"
        "Generator: dmaconn_backend\n"
        f"Root-Is-Purelib: {'true' if pure else 'false'}\n"
        f"Tag: {tag}\n"
    )


def _dist_info_files(project: Dict[str, object], editable: bool = False) -> Dict[str, bytes]:
    return {
        "METADATA": _metadata(project).encode("utf-8"),
        "WHEEL": _wheel_file(editable).encode("utf-8"),
        "top_level.txt": f"{PACKAGE}\n".encode("utf-8"),
    }


def _package_files() -> Iterator[Tuple[str, Path]]:
    for path in sorted((ROOT / PACKAGE).rglob("*")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        if path.suffix in (".py", ".typed") or path in _libraries():
            yield path.relative_to(ROOT).as_posix(), path


# ------------------------------------------------------------------- wheels


class _WheelWriter:
    def __init__(self, path: Path, dist_info: str) -> None:
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.dist_info = dist_info
        self.records: List[str] = []

    def add(self, name: str, data: bytes, mode: int = 0o644) -> None:
        info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (mode & 0o777 | 0o100000) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.records.append(f"{name},sha256={digest},{len(data)}")

    def close(self) -> None:
        record = f"{self.dist_info}/RECORD"
        self.records.append(f"{record},,")
        self.zip.writestr(
            zipfile.ZipInfo(record, date_time=(2020, 1, 1, 0, 0, 0)),
            "\n".join(self.records) + "\n",
        )
        self.zip.close()


def _build(wheel_directory: str, editable: bool) -> str:
    project = _project()
    name, version = _dist_name(project), str(project["version"])
    tag, _ = _tag(editable)
    filename = f"{name}-{version}-{tag}.whl"
    dist_info = f"{name}-{version}.dist-info"
    wheel = _WheelWriter(Path(wheel_directory) / filename, dist_info)
    try:
        if editable:
            wheel.add(f"__editable__.{name}-{version}.pth", f"{ROOT}\n".encode())
        else:
            for arcname, path in _package_files():
                wheel.add(arcname, path.read_bytes(), os.stat(path).st_mode)
        for file, data in _dist_info_files(project, editable).items():
            wheel.add(f"{dist_info}/{file}", data)
    finally:
        wheel.close()
    return filename


# ------------------------------------------------------------- PEP 517 hooks


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def _prepare_metadata(metadata_directory: str, editable: bool) -> str:
    project = _project()
    dist_info = f"{_dist_name(project)}-{project['version']}.dist-info"
    target = Path(metadata_directory) / dist_info
    target.mkdir(parents=True, exist_ok=True)
    for file, data in _dist_info_files(project, editable).items():
        (target / file).write_bytes(data)
    return dist_info


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: Optional[dict] = None
) -> str:
    return _prepare_metadata(metadata_directory, editable=False)


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: Optional[dict] = None
) -> str:
    return _prepare_metadata(metadata_directory, editable=True)


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[dict] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    return _build(wheel_directory, editable=False)


def build_editable(
    wheel_directory: str,
    config_settings: Optional[dict] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    return _build(wheel_directory, editable=True)


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    project = _project()
    base = f"{_dist_name(project)}-{project['version']}"
    filename = f"{base}.tar.gz"
    files = ["pyproject.toml", "README.md", "_backend/dmaconn_backend.py"]
    files += [arcname for arcname, path in _package_files() if path not in _libraries()]
    with tarfile.open(Path(sdist_directory) / filename, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name in files:
            if (ROOT / name).is_file():
                tar.add(ROOT / name, arcname=f"{base}/{name}")
        pkg_info = _metadata(project).encode("utf-8")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        info.mode = 0o644
        tar.addfile(info, io.BytesIO(pkg_info))
    return filename
