"""What the audio and timestamps writers share: a file of their own, or one lent to them."""

from __future__ import annotations

import os
from typing import IO, AnyStr, Generic

from typing_extensions import Self


class FileWriter(Generic[AnyStr]):
    """Writes to `file`: a path, opened here (with `mode` and `encoding`) and closed by
    `close()`, or an open file object, which `close()` flushes and leaves open to its owner.
    With `lazy`, a path is opened only when something is first written to it: a call refused
    before then leaves no file, and a file already there as it was. A subclass completes what
    it wrote in `_finish()`, which runs once, before the flush."""

    def __init__(
        self,
        file: str | os.PathLike[str] | IO[AnyStr],
        *,
        mode: str,
        encoding: str | None = None,
        lazy: bool = False,
    ) -> None:
        self._owned = isinstance(file, str | os.PathLike)
        self._path = file if isinstance(file, str | os.PathLike) else None
        self._mode, self._encoding = mode, encoding
        self._opened: IO[AnyStr] | None = None if isinstance(file, str | os.PathLike) else file
        if not lazy:
            self._open()

    def _open(self) -> IO[AnyStr]:
        """The file, opened on first use."""
        if self._opened is None:
            assert self._path is not None
            self._opened = open(self._path, self._mode, encoding=self._encoding)  # noqa: SIM115
        return self._opened

    @property
    def _file(self) -> IO[AnyStr]:
        return self._open()

    @property
    def opened(self) -> bool:
        """Whether the file is open, or was: something was written to it."""
        return self._opened is not None

    def _finish(self) -> None:
        """Complete the file before it is flushed; nothing by default."""

    def close(self) -> None:
        """Finish and flush the file; close it if this writer opened it. Again, or with nothing
        written to a lazy path: nothing."""
        if self._opened is None or self._opened.closed:
            return
        self._finish()
        self._opened.flush()
        if self._owned:
            self._opened.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
