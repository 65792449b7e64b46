# SPDX-License-Identifier: BSD-3-Clause
"""Building and loading the C++ shim (shim.cpp) against the installed PyTorch.

The shim is compiled once per PyTorch installation, compiler and shim source,
with the installed PyTorch's own headers (include/) and libraries
(libtorch_cpu, libc10) and its C++ ABI setting, then cached:
DMACONN_TORCH_CACHE, else $XDG_CACHE_HOME/dmaconn, else ~/.cache/dmaconn.
Concurrent first imports (one per rank) build it once, under a file lock.
No ninja, pybind11 or Python headers are needed: it is a plain shared object
with two C entry points, called through ctypes.

Loading a library runs its code, so the cache follows the verdict cache's
rules (src/backends/cuda_verify/cache.c, as ssh does): the directory, the lock file and the
library must be ours, not writable by group or others, and not symbolic links
(opened with O_NOFOLLOW and checked on the open descriptor), and every
directory above the cache up to "/" must be owned by us or root and not
writable by others unless sticky (so must each directory holding a symbolic
link on the given path, and such a link must be ours or root's).  The library is loaded through the
descriptor that was checked (/proc/self/fd/N).  Where a rule fails, nothing
there is loaded or written: a warning says why (once) and the shim is built
in a new private temporary directory instead.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import os
import shlex
import shutil
import stat
import subprocess
import tempfile
import warnings
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


class UnsafeCache(ShimUnavailable):
    """A path of the shim cache fails the ownership rules; str() says which and why."""


try:  # a DmaconnWarning in the package; a plain one where loaded on its own (tests)
    from .._errors import DmaconnWarning as _Warning
except ImportError:  # pragma: no cover - only outside the package
    _Warning = UserWarning  # type: ignore[misc,assignment]


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
                # The linker creates its output with the umask's mode; the
                # cache's rule refuses a library others may write.
                os.chmod(tmp, 0o755)
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


def _refusal(st: os.stat_result, want_dir: bool) -> Optional[str]:
    """Why an entry of the cache is not ours alone, or None (ssh's rule)."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if want_dir and not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if not want_dir and not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_uid != os.geteuid():
        return f"belongs to another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def check_dir(directory: Path) -> None:
    """UnsafeCache unless directory and every directory above it pass the rules."""
    try:
        st = os.lstat(directory)
    except OSError as exc:
        raise UnsafeCache(f"the shim cache {directory} cannot be checked ({exc})") from None
    why = _refusal(st, True)
    if why:
        raise UnsafeCache(f"the shim cache {directory} {why}")
    # A symbolic link on the way that another user owns, they may repoint.
    given = Path(os.path.abspath(directory))
    for step in reversed(given.parents):
        try:
            lst = os.lstat(step)
        except OSError as exc:
            raise UnsafeCache(
                f"{step}, above the shim cache {directory}, cannot be checked ({exc})"
            ) from None
        if stat.S_ISLNK(lst.st_mode) and lst.st_uid not in (0, os.geteuid()):
            raise UnsafeCache(
                f"{step}, above the shim cache {directory}, is a symbolic link of another user "
                f"(uid {lst.st_uid})"
            )
        if stat.S_ISLNK(lst.st_mode):
            # Ours, but whoever may write the directory holding it may put
            # theirs in its place after this check.
            try:
                hst = os.stat(step.parent)
            except OSError as exc:
                raise UnsafeCache(
                    f"{step.parent}, above the shim cache {directory}, cannot be checked ({exc})"
                ) from None
            if hst.st_uid not in (0, os.geteuid()) or (
                hst.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not hst.st_mode & stat.S_ISVTX
            ):
                raise UnsafeCache(
                    f"{step.parent}, holding the symbolic link {step} above the shim cache {directory}, "
                    f"belongs to another user or is writable by group or others and not sticky "
                    f"(uid {hst.st_uid}, mode {stat.S_IMODE(hst.st_mode):04o})"
                )
    # Every directory above it as its real path names them: another user who
    # may write one could move the cache aside and put their own in its place.
    real = Path(os.path.realpath(directory))
    for parent in real.parents:
        try:
            pst = os.stat(parent)
        except OSError as exc:
            raise UnsafeCache(
                f"{parent}, above the shim cache {directory}, cannot be checked ({exc})"
            ) from None
        if pst.st_uid not in (0, os.geteuid()):
            raise UnsafeCache(
                f"{parent}, above the shim cache {directory}, belongs to another user (uid {pst.st_uid})"
            )
        if pst.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not pst.st_mode & stat.S_ISVTX:
            raise UnsafeCache(
                f"{parent}, above the shim cache {directory}, is writable by group or others "
                f"and not sticky (mode {stat.S_IMODE(pst.st_mode):04o})"
            )


def configured_dir() -> Path:
    """DMACONN_TORCH_CACHE, else $XDG_CACHE_HOME/dmaconn, else ~/.cache/dmaconn."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "dmaconn"


def cache_dir() -> Path:
    """Where built shims are kept (created private to the user); UnsafeCache
    when it or a directory above it fails the rules, OSError when it cannot
    be created."""
    base = configured_dir()
    # Each directory it creates is private (Path.mkdir gives the parents the umask's mode).
    missing = [d for d in [base, *base.parents] if not os.path.lexists(d)]
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass
    check_dir(base)
    return base


_OPEN_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def _open_checked(path: Path, flags: int, what: str) -> int:
    """A descriptor of path, opened without following a link and checked
    on the descriptor itself; UnsafeCache (closed) when it fails the rules.
    FileNotFoundError passes through."""
    try:
        fd = os.open(path, flags | _OPEN_FLAGS, 0o600)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if os.path.islink(path):
            raise UnsafeCache(f"the shim {what} {path} is a symbolic link") from None
        raise UnsafeCache(f"the shim {what} {path} cannot be opened ({exc})") from None
    try:
        why = _refusal(os.fstat(fd), False)
    except OSError as exc:
        why = f"cannot be checked ({exc})"
    if why:
        os.close(fd)
        raise UnsafeCache(f"the shim {what} {path} {why}")
    return fd


def _load_cached(torch_module: Any, directory: Path, key: str) -> "Shim":
    """The shim of this key in a checked cache directory, built there if absent."""
    target = directory / f"torch-shim-{key}.so"
    try:
        return Shim.from_fd(target, _open_checked(target, os.O_RDONLY, "library"))
    except FileNotFoundError:
        pass
    try:
        lock = _open_checked(directory / f".torch-shim-{key}.lock", os.O_RDWR | os.O_CREAT, "lock file")
    except FileNotFoundError as exc:  # the directory went away
        raise ShimUnavailable(f"no lock file for the shim in {directory} ({exc})") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be building it
        try:
            fd = _open_checked(target, os.O_RDONLY, "library")
        except FileNotFoundError:
            compile_shared(torch_module, SOURCE, target)
            fd = _open_checked(target, os.O_RDONLY, "library")
        return Shim.from_fd(target, fd)
    finally:
        os.close(lock)


def _load_private(torch_module: Any, key: str) -> "Shim":
    """The shim built in a new private temporary directory (removed once loaded)."""
    with tempfile.TemporaryDirectory(prefix="dmaconn-torch-shim-") as tmp:
        check_dir(Path(tmp))
        target = Path(tmp) / f"torch-shim-{key}.so"
        compile_shared(torch_module, SOURCE, target)
        return Shim.from_fd(target, _open_checked(target, os.O_RDONLY, "library"))


_fd_names: set = set()  # the /proc/self/fd names shims were loaded as
_warned: set = set()  # the kinds of warning given (each once per process)


def warn_once(kind: str, message: str, stacklevel: int) -> None:
    """Warns with message unless a warning of this kind was given already.
    stacklevel counts as warnings.warn would from warn_once's caller."""
    if kind in _warned:
        return
    _warned.add(kind)
    warnings.warn(message, _Warning, stacklevel=stacklevel + 1)


def _warn_unsafe(reason: str) -> None:
    warn_once(
        "unsafe cache",
        f"dmaconn.torch: {reason}: nothing there is loaded or written; the shim is built in a "
        f"private temporary directory instead (make the cache yours and private, or set {CACHE_ENV})",
        stacklevel=5,
    )


def _prepare(torch_module: Any) -> Tuple[bytes, str]:
    try:
        source_bytes = SOURCE.read_bytes()
    except OSError as exc:
        raise ShimUnavailable(f"the shim source is missing from this installation ({exc})") from None
    header(torch_dirs(torch_module)[0])
    return source_bytes, cache_key(torch_module, source_bytes)


def _cache_dir_or_why() -> Path:
    try:
        return cache_dir()
    except OSError as exc:
        raise ShimUnavailable(f"no cache directory for the shim ({exc}); set {CACHE_ENV}") from None


def load(torch_module: Any) -> "Shim":
    """Builds (or finds) and loads the shim; ShimUnavailable says why not.
    Never loads a file of the cache that fails the rules (see above)."""
    _, key = _prepare(torch_module)
    try:
        return _load_cached(torch_module, _cache_dir_or_why(), key)
    except UnsafeCache as exc:
        _warn_unsafe(str(exc))
    return _load_private(torch_module, key)


class Shim:
    """The loaded shim: registers dmaconn pairs in c10d's registry."""

    def __init__(self, path: Path, load_as: Optional[str] = None) -> None:
        self.path = path
        try:
            self._lib = ctypes.CDLL(load_as or str(path), mode=os.RTLD_NOW | os.RTLD_LOCAL)
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

    @classmethod
    def from_fd(cls, path: Path, fd: int) -> "Shim":
        """Loads the file open on fd (checked by the caller), not whatever
        path names by now, then closes fd."""
        extra: List[int] = []
        try:
            if os.path.isdir("/proc/self/fd"):
                # The loader takes a name it has loaded before for that library
                # again: each load gets a name of its own.
                while f"/proc/self/fd/{fd}" in _fd_names:
                    extra.append(fd)
                    fd = os.dup(fd)
                name = f"/proc/self/fd/{fd}"
                _fd_names.add(name)
                return cls(path, name)
            # No /proc: the path, in a directory only we may write (checked).
            st, now = os.fstat(fd), os.stat(path, follow_symlinks=False)
            if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                raise ShimUnavailable(f"the shim {path} changed while it was being loaded")
            return cls(path)
        finally:
            for spare in extra:
                os.close(spare)
            os.close(fd)

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
