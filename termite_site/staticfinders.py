"""Serve plotly.js from the installed plotly package, so the charts need no CDN and no copy in the repo."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, overload

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import CheckMessage
from django.core.files.storage import FileSystemStorage

PLOTLY_JS = "vendor/plotly.min.js"
_PACKAGE_DATA = Path(plotly.__file__).resolve().parent / "package_data"


class PlotlyFinder(BaseFinder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.storage = FileSystemStorage(location=_PACKAGE_DATA)
        self.storage.prefix = "vendor"  # type: ignore[attr-defined]  # collectstatic reads this optional attribute

    def check(self, **kwargs: Any) -> builtins.list[CheckMessage]:
        return []

    @overload
    def find(self, path: str, find_all: Literal[False] = False, **kwargs: Any) -> str | None: ...
    @overload
    def find(self, path: str, find_all: Literal[True], **kwargs: Any) -> builtins.list[str]: ...
    def find(self, path: str, find_all: bool = False, **kwargs: Any) -> str | builtins.list[str] | None:
        if path != PLOTLY_JS:
            return [] if find_all else None
        found = str(_PACKAGE_DATA / "plotly.min.js")
        return [found] if find_all else found

    def list(self, ignore_patterns: Iterable[str] | None) -> Iterator[tuple[str, FileSystemStorage]]:
        yield "plotly.min.js", self.storage
