"""The bootstrap budget forecast: how fast each bootstrap file grows, and when the gateway will
cut it at that rate. Pure: lengths and times in, figures out.

**The rate** of a file is its net change over the measured span divided by the span, in
characters per day: (length now - length at the start) / (now - start). The span is the last
`window` (health.bootstrap_growth_days), starting from the length in force then (the last
snapshot before it). Snapshots are taken only when something changes, at irregular times, so a
least-squares fit over them would weigh a busy hour more than a quiet week; the net change is
what the file did.

The span starts later at a **break**, after which the file's past says nothing about its
future: the file was absent (created since, or deleted and created again), it shrank by more
than `BREAK_SHARE` between two snapshots (trimmed, consolidated, rewritten), or a rewind
restored it. A span shorter than `MIN_SPAN_DAYS` gives no rate ("not enough history"), so a
file just created, just trimmed, or with one snapshot is never extrapolated from a few minutes.

**Days to truncation**: for a file, (per-file cap - length) / rate; 0 when it is over the cap
already (the gateway cuts it in every session it starts); none when the rate is unknown, zero
or negative. For the whole set, (total cap - total) / the sum of the files' rates, where the total
counts each file up to the per-file cap (as the gateway does) and a file over its cap adds
nothing more. The figures are linear extrapolations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

DAY = 86_400.0
MIN_SPAN_DAYS = 1.0
BREAK_SHARE = 0.2

# (Unix time, length in characters, or None when the file was absent then), oldest first.
Point = tuple[float, int | None]


@dataclass(frozen=True)
class Growth:
    """A file's rate in characters per day, measured over `days`; None when unknown, and
    `reason` says why."""

    rate: float | None
    days: float | None = None
    reason: str | None = None


def growth(
    points: Sequence[Point],
    now: float,
    window_days: float,
    resets: Iterable[float] = (),
) -> Growth:
    """Given a file's recorded lengths (oldest first; the last one is its length `now`), the
    window and the times a rewind restored it, return its growth (see the module)."""
    start_of_window = now - window_days * DAY
    kept = [point for point in points if point[0] <= now]
    if not kept or kept[-1][1] is None:
        return Growth(None, reason="the file is absent")
    in_force = [index for index, (when, _) in enumerate(kept) if when <= start_of_window]
    if in_force:
        first = in_force[-1]
        kept = [(start_of_window, kept[first][1]), *kept[first + 1 :]]
    start = 0
    rewinds = sorted(resets)
    for index in range(1, len(kept)):
        (before_at, before), (at, length) = kept[index - 1], kept[index]
        # the rewind's own pre-rewind snapshot is taken at (or just before) its time; what it
        # restored shows from the next point on
        rewound = any(before_at <= when < at for when in rewinds)
        if before is None or length is None or length < before * (1 - BREAK_SHARE) or rewound:
            start = index
    since, first_length = kept[start]
    span = (now - since) / DAY
    if first_length is None or span < MIN_SPAN_DAYS:
        what = "of history" if start == 0 else "since it was created, trimmed or rewound"
        return Growth(None, reason=f"less than {MIN_SPAN_DAYS:g} day {what}")
    return Growth((kept[-1][1] - first_length) / span, span)


@dataclass(frozen=True)
class FileBudget:
    """One bootstrap file against the per-file cap."""

    path: str
    chars: int
    cap: int
    growth: Growth

    @property
    def truncated(self) -> bool:
        return self.chars > self.cap

    @property
    def days_left(self) -> float | None:
        """Days until the gateway cuts it at its rate: 0 when over the cap, None when not
        growing or unknown."""
        if self.truncated:
            return 0.0
        rate = self.growth.rate
        if rate is None or rate <= 0:
            return None
        return (self.cap - self.chars) / rate

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.path,
            "chars": self.chars,
            "cap": self.cap,
            "growth_per_day": _round(self.growth.rate),
            "growth_days": _round(self.growth.days),
            "days_left": _round(self.days_left),
            "no_rate": self.growth.reason,
        }


@dataclass(frozen=True)
class TotalBudget:
    """Every bootstrap file together against the total cap, its rate (None: no file's is
    known), the file that adds the most per day, and the days until the set reaches the cap,
    each file counted up to the per-file cap (0 when there already; None: never)."""

    chars: int
    cap: int
    rate: float | None
    grower: FileBudget | None
    days_left: float | None

    @property
    def truncated(self) -> bool:
        return self.chars > self.cap

    def to_json(self) -> dict[str, object]:
        return {
            "chars": self.chars,
            "cap": self.cap,
            "growth_per_day": _round(self.rate),
            "days_left": _round(self.days_left),
            "grower": self.grower.path if self.grower else None,
        }


def total_budget(
    files: Sequence[FileBudget], others: Mapping[str, int], max_chars: int, total_cap: int
) -> TotalBudget:
    """Given the forecast files, the lengths of the other injected files (counted at their
    length, without growth), the per-file and total caps, return the set's budget."""
    lengths = [budget.chars for budget in files] + list(others.values())
    chars = sum(min(length, max_chars) for length in lengths)
    growing = [b for b in files if b.growth.rate is not None and not b.truncated]
    rate = sum(b.growth.rate or 0.0 for b in growing) if growing else None
    positive = [b for b in growing if (b.growth.rate or 0) > 0]
    grower = max(positive, key=lambda b: b.growth.rate or 0.0, default=None)
    moving = [(min(b.chars, max_chars), max_chars, b.growth.rate or 0.0) for b in growing]
    fixed = chars - sum(start for start, _, _ in moving)
    return TotalBudget(chars, total_cap, rate, grower, _reaches(moving, fixed, total_cap))


def _reaches(moving: Sequence[tuple[int, int, float]], fixed: int, cap: int) -> float | None:
    """Given the growing files (length now, per-file cap, rate per day), the length of the rest
    and the total cap, return in how many days the set reaches the cap, None if never. Each
    file grows until its own cap (the gateway counts no more of it) or shrinks to nothing, so
    the total is linear between those moments: find the first one at the cap or over it, and
    interpolate from the one before."""

    def total(day: float) -> float:
        return fixed + sum(min(max(start + rate * day, 0.0), top) for start, top, rate in moving)

    stops = {
        (top - start) / rate if rate > 0 else start / -rate for start, top, rate in moving if rate
    }
    begin, at_begin = 0.0, total(0.0)
    if at_begin >= cap:
        return 0.0
    for end in sorted(stops):
        at_end = total(end)
        if at_end >= cap:
            return begin + (cap - at_begin) * (end - begin) / (at_end - at_begin)
        begin, at_begin = end, at_end
    return None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)
