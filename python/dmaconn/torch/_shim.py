# SPDX-License-Identifier: BSD-3-Clause
"""Building and loading the C++ shim (shim.cpp) against the installed PyTorch.

The shim is compiled once per PyTorch installation, compiler and shim source,
with the installed PyTorch's own headers (include/) and libraries
(libtorch_cpu, libc10) and its C++ ABI setting, then cached:
DMACONN_TORCH_CACHE, else $XDG_CACHE_HOME/dmaconn, else ~/.cache/dmaconn.
Concurrent first imports (one per rank) build it once, under a file lock.
No ninja, pybind11 or Python headers are needed: it is a plain shared object
with two C entry points, called through ctypes.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

SOURCE = Path(__file__).resolve().with_name("shim.cpp")
CACHE_ENV = "DMACONN_TORCH_CACHE"
SHIM_ABI = 1  # dmaconn_torch_shim_abi() of the shim this module drives
# Where the header sits, newest layout first (it moved into symm_mem/).
HEADERS = (
    "torch/csrc/distributed/c10d/symm_mem/DMAConnectivity.hpp",
    "torch/csrc/distributed/c10d/DMAConnectivity.hpp",
)
_STANDARDS = ("-std=c++17", "-std=c++20")
_BUILD_TIMEOUT_S = 600


class ShimUnavailable(Exception):
    """The shim cannot be built or loaded here; str() says why."""


def torch_dirs(torch_module: Any) -> Tuple[Path, Path]:
    """(include, lib) of an installed PyTorch."""
    where = getattr(torch_module, "__file__", None)
    if not where:
        raise ShimUnavailable("the torch module has no installation directory")
    root = Path(where).resolve().parent
    include, lib = root / "include", root / "lib"
    if not include.is_dir():
        raise ShimUnavailable(f"this PyTorch ships no C++ headers ({include} is missing)")
    if not (lib / "libtorch_cpu.so").exists():
        raise ShimUnavailable(f"this PyTorch has no {lib / 'libtorch_cpu.so'}")
    return include, lib


def header(include: Path) -> Path:
    for name in HEADERS:
        if (include / name).is_file():
            return include / name
    raise ShimUnavailable(
        f"this PyTorch has no DMA connectivity registry header ({HEADERS[0]} under {include})"
    )


def compiler() -> List[str]:
    """The C++ compiler command: $CXX, else c++, g++ or clang++ on PATH."""
    env = os.environ.get("CXX")
    if env:
        return shlex.split(env)
    for name in ("c++", "g++", "clang++"):
        found = shutil.which(name)
        if found:
            return [found]
    raise ShimUnavailable("no C++ compiler (set CXX, or install g++)")


def _abi(torch_module: Any) -> int:
    return int(bool(getattr(getattr(torch_module, "_C", None), "_GLIBCXX_USE_CXX11_ABI", True)))


def command(
    torch_module: Any, source: Path, output: Path, standard: str = _STANDARDS[0]
) -> List[str]:
    """The compiler command that builds source into output against torch_module."""
    include, lib = torch_dirs(torch_module)
    return compiler() + [
        standard,
        "-O2",
        "-shared",
        "-fPIC",
        "-fvisibility=hidden",
        f"-D_GLIBCXX_USE_CXX11_ABI={_abi(torch_module)}",
        "-I",
        str(include),
        "-I",
        str(include / "torch" / "csrc" / "api" / "include"),
        str(source),
        "-o",
        str(output),
        "-L",
        str(lib),
        f"-Wl,-rpath,{lib}",
        "-ltorch_cpu",
        "-lc10",
        "-ldl",
    ]


def compile_shared(torch_module: Any, source: Path, output: Path) -> None:
    """Compiles source into output (written whole or not at all)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    errors: List[str] = []
    for standard in _STANDARDS:
        fd, tmp = tempfile.mkstemp(prefix=output.name + ".", suffix=".tmp", dir=output.parent)
        os.close(fd)
        try:
            argv = command(torch_module, source, Path(tmp), standard)
            try:
                proc = subprocess.run(
                    argv, capture_output=True, text=True, timeout=_BUILD_TIMEOUT_S
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise ShimUnavailable(f"cannot run {argv[0]}: {exc}") from None
            if proc.returncode == 0:
                os.replace(tmp, output)
                return
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
            errors.append(f"{' '.join(argv)}\n{tail}")
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    raise ShimUnavailable("the shim does not compile against this PyTorch:\n" + "\n".join(errors))


def _stat_key(path: Optional[str]) -> str:
    if not path:
        return ""
    try:
        st = os.stat(path)
    except OSError:
        return path
    return f"{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}"


def cache_key(torch_module: Any, source_bytes: bytes) -> str:
    """Changes with the shim source, the PyTorch installation and the compiler."""
    include, lib = torch_dirs(torch_module)
    cxx = compiler()
    parts: Sequence[str] = (
        hashlib.sha256(source_bytes).hexdigest(),
        str(getattr(torch_module, "__version__", "")),
        _stat_key(str(lib / "libtorch_cpu.so")),
        _stat_key(str(header(include))),
        str(_abi(torch_module)),
        " ".join(cxx),
        _stat_key(shutil.which(cxx[0]) or cxx[0]),
    )
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


def cache_dir() -> Path:
    """Where built shims are kept (created, private to the user)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        base = Path(env)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "dmaconn"
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    if base.stat().st_uid != os.getuid():
        raise ShimUnavailable(f"the shim cache {base} belongs to another user")
    return base


def build(torch_module: Any) -> Path:
    """The shim for torch_module: from the cache, or built into it."""
    try:
        source_bytes = SOURCE.read_bytes()
    except OSError as exc:
        raise ShimUnavailable(f"the shim source is missing from this installation ({exc})") from None
    header(torch_dirs(torch_module)[0])
    key = cache_key(torch_module, source_bytes)
    try:
        directory = cache_dir()
    except OSError as exc:
        raise ShimUnavailable(f"no cache directory for the shim ({exc}); set {CACHE_ENV}") from None
    target = directory / f"torch-shim-{key}.so"
    if target.exists():
        return target
    with open(directory / f".torch-shim-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be building it
        if not target.exists():
            compile_shared(torch_module, SOURCE, target)
    return target


class Shim:
    """The loaded shim: registers dmaconn pairs in c10d's registry."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._lib = ctypes.CDLL(str(path), mode=os.RTLD_NOW | os.RTLD_LOCAL)
            abi = self._lib.dmaconn_torch_shim_abi
            self._register = self._lib.dmaconn_torch_shim_register
        except (OSError, AttributeError) as exc:
            raise ShimUnavailable(f"cannot load the shim {path}: {exc}") from None
        abi.restype = ctypes.c_int
        abi.argtypes = []
        if abi() != SHIM_ABI:
            raise ShimUnavailable(f"{path} is a shim of another version ({abi()}, not {SHIM_ABI})")
        self._register.restype = ctypes.c_int
        self._register.argtypes = [
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_size_t,
        ]

    def register(
        self, torch_type: int, connection: str, library: str, dmaconn_type: int, dmaconn_connection: str
    ) -> None:
        """Registers (torch_type, connection) in c10d, answered by dmaconn; RuntimeError if refused."""
        error = ctypes.create_string_buffer(1024)
        rc = self._register(
            torch_type,
            os.fsencode(connection),
            os.fsencode(library),
            dmaconn_type,
            os.fsencode(dmaconn_connection),
            error,
            len(error),
        )
        if rc != 0:
            raise RuntimeError(os.fsdecode(error.value) or "the shim refused the registration")


def load(torch_module: Any) -> Shim:
    """Builds (or finds) and loads the shim; ShimUnavailable says why not."""
    return Shim(build(torch_module))
