# SPDX-License-Identifier: BSD-3-Clause
"""Exceptions and the warning category."""

from __future__ import annotations

from typing import Any, Optional

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
ENOENT = -10


class DmaconnWarning(UserWarning):
    """A warning raised by a detector (the result's ``warnings`` hold it too)."""


# The exception class of each C error code, filled as the classes are defined.
ERROR_CLASSES: dict[int, type[Error]] = {}


class Error(RuntimeError):
    """A dmaconn failure.

    ``code`` is the C library's error code (a negative ``DMACONN_E*`` value,
    ``None`` where the library did not answer) and ``message`` its message.
    A ``RuntimeError``, as PyTorch raises for the same failures.
    """

    code: Optional[int] = None

    def __init_subclass__(cls, code: Optional[int] = None, **kwargs: Any) -> None:
        # ``class X(Error, code=E...)`` names the class that error_for raises.
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code
            ERROR_CLASSES[code] = cls

    def __init__(self, message: str, code: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


class InvalidArgumentError(Error, ValueError, code=EINVAL):
    """DMACONN_EINVAL: an unknown device type, an empty connection type, ..."""


class NoDetectorError(Error, code=ENODETECTOR):
    """DMACONN_ENODETECTOR: no detector is registered for the pair."""


class OutOfMemoryError(Error, code=ENOMEM):
    """DMACONN_ENOMEM."""


class DetectorExistsError(Error, code=EEXIST):
    """DMACONN_EEXIST: the pair already has a detector."""


class DetectorError(Error, code=EDETECTOR):
    """DMACONN_EDETECTOR: a detector failed (a Python one: see ``__cause__``)."""


class ReplayError(Error, code=EREPLAY):
    """DMACONN_EREPLAY: DMACONN_REPLAY names a file that cannot be used."""


class BusyError(Error, code=EBUSY):
    """DMACONN_EBUSY: the pair is already being detected on this thread."""


class RangeError(Error, IndexError, code=ERANGE):
    """DMACONN_ERANGE: an index out of range."""


class UnavailableError(Error, code=EUNAVAILABLE):
    """DMACONN_EUNAVAILABLE: an optional component is not available."""


class LibraryNotFoundError(Error, ImportError):
    """The shared library libdmaconn.so.0 could not be loaded."""


def error_for(code: int, message: str) -> Error:
    """The exception for a C error code."""
    return ERROR_CLASSES.get(code, Error)(message, code)
