"""Exceptions and the warning category."""

from __future__ import annotations

from typing import Optional

# The C library's error codes (enum dmaconn_error in dmaconn.h).
OK = 0
EINVAL = -1
ENODETECTOR = -2
ENOMEM = -3
EEXIST = -4
EDETECTOR = -5
EREPLAY = -6
EBUSY = -7
ERANGE = -8
EUNAVAILABLE = -9


class DmaconnWarning(UserWarning):
    """A warning raised by a detector (the result's ``warnings`` hold it too)."""


class Error(RuntimeError):
    """A dmaconn failure.

    ``code`` is the C library's error code (a negative ``DMACONN_E*`` value,
    ``None`` where the library did not answer) and ``message`` its message.
    A ``RuntimeError``, as PyTorch raises for the same failures.
    """

    code: Optional[int] = None

    def __init__(self, message: str, code: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


class InvalidArgumentError(Error, ValueError):
    """DMACONN_EINVAL: an unknown device type, an empty connection type, ..."""

    code = EINVAL


class NoDetectorError(Error):
    """DMACONN_ENODETECTOR: no detector is registered for the pair."""

    code = ENODETECTOR


class OutOfMemoryError(Error):
    """DMACONN_ENOMEM."""

    code = ENOMEM


class DetectorExistsError(Error):
    """DMACONN_EEXIST: the pair already has a detector."""

    code = EEXIST


class DetectorError(Error):
    """DMACONN_EDETECTOR: a detector failed (a Python one: see ``__cause__``)."""

    code = EDETECTOR


class ReplayError(Error):
    """DMACONN_EREPLAY: DMACONN_REPLAY names a file that cannot be used."""

    code = EREPLAY


class BusyError(Error):
    """DMACONN_EBUSY: the pair is already being detected on this thread."""

    code = EBUSY


class RangeError(Error, IndexError):
    """DMACONN_ERANGE: an index out of range."""

    code = ERANGE


class UnavailableError(Error):
    """DMACONN_EUNAVAILABLE: an optional component is not available."""

    code = EUNAVAILABLE


class LibraryNotFoundError(Error, ImportError):
    """The shared library libdmaconn.so.0 could not be loaded."""


ERROR_CLASSES: dict[int, type[Error]] = {
    cls.code: cls  # type: ignore[misc]
    for cls in (
        InvalidArgumentError,
        NoDetectorError,
        OutOfMemoryError,
        DetectorExistsError,
        DetectorError,
        ReplayError,
        BusyError,
        RangeError,
        UnavailableError,
    )
}


def error_for(code: int, message: str) -> Error:
    """The exception for a C error code."""
    return ERROR_CLASSES.get(code, Error)(message, code)
