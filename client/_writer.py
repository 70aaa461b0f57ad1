"""What the audio and timestamps writers share: a file of their own, or one lent to them."""

from __future__ import annotations

import os
from typing import IO, AnyStr, Generic

from typing_extensions import Self


class FileWriter(Generic[AnyStr]):
    """Writes to `file`: a path, opened here (with `mode` and `encoding`) and closed by
    `close()`, or an open file object, which `close()` flushes and leaves open to its owner.
    A subclass completes what it wrote in `_finish()`, which runs once, before the flush."""

    def __init__(
        self,
        file: str | os.PathLike[str] | IO[AnyStr],
        *,
        mode: str,
        encoding: str | None = None,
    ) -> None:
        self._owned = isinstance(file, str | os.PathLike)
        self._file: IO[AnyStr] = (
            open(file, mode, encoding=encoding) if isinstance(file, str | os.PathLike) else file  # noqa: SIM115
        )

    def _finish(self) -> None:
        """Complete the file before it is flushed; nothing by default."""

    def close(self) -> None:
        """Finish and flush the file; close it if this writer opened it. Again: nothing."""
        if self._file.closed:
            return
        self._finish()
        self._file.flush()
        if self._owned:
            self._file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
