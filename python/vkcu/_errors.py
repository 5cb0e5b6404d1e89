# SPDX-License-Identifier: GPL-2.0-or-later
"""Exceptions: the library's one-line message, and a class for each row of
the README's exit-code table (the ``exit_code`` attribute is that row)."""
from __future__ import annotations

import errno as _errno
import os
from typing import Optional

from . import _lib


class Error(Exception):
    """Every failure the library reports. ``message`` is its one line (it
    names the file, frame or setting); ``code`` the library's return value
    (a negative errno or a VKCU_ERR_* value, include/vkcu/common.h)."""

    exit_code = 1

    def __init__(self, message: str, code: Optional[int] = None):
        super().__init__(message)
        self.message = message
        self.code = code

    def __str__(self) -> str:
        return self.message


class UsageError(Error, ValueError):
    """A bad option or argument (exit code 2): nothing was opened or written."""

    exit_code = 2


class MediaError(Error):
    """Bad input (exit code 3): missing, empty, not video, truncated, corrupt
    with ``strict``, no decoder for its codec."""

    exit_code = 3


class InputNotFoundError(MediaError, FileNotFoundError):
    """The input does not exist (also a FileNotFoundError)."""

    def __init__(self, message: str, code: Optional[int] = None, filename: Optional[str] = None):
        MediaError.__init__(self, message, code)
        self.errno = _errno.ENOENT
        self.strerror = message
        self.filename = filename


class NotSeekableError(MediaError):
    """Random access is impossible on this input (a raw stream without
    timestamps, a pipe): iterate it instead."""


class FrameIndexError(UsageError, IndexError):
    """A frame number outside the input's frames (also an IndexError, as a
    sequence's index out of range is): numbers run from 0 to ``len(reader) -
    1``, or from ``-len(reader)`` to -1 counting from the end."""


class _NoLength(NotSeekableError, TypeError):
    """``len(reader)`` of an input whose frames cannot be numbered. Also a
    TypeError, as ``len()`` of an object without a length is, so that
    ``list(reader)`` (which asks for the length first, as a hint) iterates
    such an input instead of failing."""


class OutputError(Error):
    """An output cannot be written (exit code 4): the folder is missing or
    read-only, the file exists without ``overwrite``, the disk is full."""

    exit_code = 4


class DeviceError(Error):
    """No usable GPU, the GPU was lost, or its decoder stalled (exit code 5)."""

    exit_code = 5


class MismatchError(Error):
    """Frames differ from their expectation (exit code 6): raised by the
    assertion helpers; compare() and verify() return verdicts instead."""

    exit_code = 6


class Interrupted(Error):
    """Stopped by a stop request (exit code 130)."""

    exit_code = 130


class FramesHeldError(Error, BufferError):
    """The library's refusal when every slot of a reader's pool is held
    (-ENOBUFS). The package's readers do not meet it: past ``max_held``
    frames held they hand out copies instead (docs/python.md)."""

    exit_code = 2


def from_code(code: int, message: str, filename: Optional[str] = None) -> Exception:
    """The exception for a library return value and its one line."""
    message = message or _lib.error_string(code)
    if code == -_errno.ENOENT or (code == _lib.VKCU_ERR_INPUT and filename and not os.path.lexists(filename)):
        return InputNotFoundError(message, code, filename)
    if code in (-_errno.EINVAL, _lib.VKCU_ERR_USAGE):
        return UsageError(message, code)
    if code == -_errno.ENOBUFS:
        return FramesHeldError(message, code)
    if code == -_errno.ENOSYS:
        return NotSeekableError(message, code)
    if code == -_errno.ENOMEM:
        return MemoryError(message)
    if code == _lib.VKCU_ERR_OUTPUT:
        return OutputError(message, code)
    if code == _lib.VKCU_ERR_DEVICE:
        return DeviceError(message, code)
    if code == _lib.VKCU_ERR_MISMATCH:
        return MismatchError(message, code)
    if code == _lib.VKCU_ERR_INTERRUPT:
        return Interrupted(message, code)
    if code == _lib.VKCU_ERR_INPUT:
        return MediaError(message, code)
    return Error(message, code)
