"""A progress bar for calibration: tqdm when it is installed, else periodic log lines."""

from __future__ import annotations

import logging
import sys
import time
from typing import Iterable, Iterator, TypeVar

logger = logging.getLogger("kiln.quantize")

T = TypeVar("T")

# Without tqdm, report about this often (seconds) plus the first and the last sample.
_LOG_INTERVAL_S = 2.0


def _total(items: Iterable[object]) -> int | None:
    try:
        return len(items)  # type: ignore[arg-type]
    except TypeError:
        return None


def track(items: Iterable[T], description: str, *, enabled: bool = True) -> Iterator[T]:
    """Yields ``items`` while showing how many were processed (and of how many)."""
    if not enabled:
        yield from items
        return
    total = _total(items)
    try:
        from tqdm import tqdm  # optional: nicer bar when available
    except ImportError:
        tqdm = None
    if tqdm is not None:
        yield from tqdm(items, desc=description, total=total, unit="sample", file=sys.stderr)
        return
    yield from _log_progress(items, description, total)


def _log_progress(items: Iterable[T], description: str, total: int | None) -> Iterator[T]:
    started = last = time.perf_counter()
    count = 0
    of = f"/{total}" if total is not None else ""
    for item in items:
        yield item
        count += 1
        now = time.perf_counter()
        if count == 1 or now - last >= _LOG_INTERVAL_S or count == total:
            logger.info("%s: %d%s samples (%.1f s)", description, count, of, now - started)
            last = now
    if count == 0 or (total is not None and count != total):
        logger.info("%s: %d samples (%.1f s)", description, count, time.perf_counter() - started)
