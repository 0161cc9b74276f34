"""Errors shared by every layer: input problems, infeasibility, solver failure, audit failure."""

from __future__ import annotations

from dataclasses import dataclass


SHOWN_CHARS = 80  # a longer value or name is shown cut, with its length


def _shown(value: object) -> str:
    """A cell value as a planner would recognise it in a message (a long text cut, with its length)."""
    if isinstance(value, str) and len(value) > SHOWN_CHARS:
        return f"{value[:SHOWN_CHARS]!r}... ({len(value):,} characters)"
    if isinstance(value, (str, int, float, bool)):
        return repr(value)
    return _shown(str(value))


def printable(text: str) -> str:
    """A message as one line a terminal shows as written: control and other unprintable characters escaped."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _where(sheet: str, cell: str, column: str) -> str:
    """'sites!C4 pue', 'sites pue' or 'workbook': where a problem or notice is."""
    return (sheet or "workbook") + (f"!{cell}" if cell else "") + (f" {column}" if column else "")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, located by sheet, Excel cell and column (or key).

    ``cell`` is "" when the problem concerns a whole sheet, row or missing column; ``value`` is
    None when there is no offending value to show.
    """

    sheet: str
    cell: str
    column: str
    value: object
    message: str
    fix: str = ""

    def __str__(self) -> str:
        text = f"{_where(self.sheet, self.cell, self.column)}: {self.message}"
        if self.value is not None:
            text += f", got {_shown(self.value)}"
        if self.fix:
            text += f" (fix: {self.fix})"
        return printable(text)


@dataclass(frozen=True)
class Notice:
    """Something the loader did that the planner should see, located like a Problem; not an error.

    ``kind``: ``read`` (a value or name read in a form other than the canonical one, e.g. '25%' as 0.25),
    ``ignored`` (a notes column or a sheet/column starting with '_'), ``catalog`` (a workbook table
    replacing or extending a default catalog table) or ``warning`` (a value no real plan has)."""

    sheet: str
    cell: str
    column: str
    message: str
    kind: str = "read"

    def __str__(self) -> str:
        return printable(f"{_where(self.sheet, self.cell, self.column)}: {self.message}")


class InputError(Exception):
    """The workbook (or catalog) is invalid; ``problems`` lists everything found, in order."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class Infeasible(Exception):
    """The model has no feasible design; ``reason`` says why in the planner's terms."""

    def __init__(self, reason: str, details: dict | None = None):
        self.reason = reason
        self.details = details or {}
        super().__init__(reason)


class NoSolution(Exception):
    """The solver stopped (time or node limit) without finding any feasible design."""


class OutputError(Exception):
    """The output folder cannot be written; the message says which and why."""


class SolverFailure(Exception):
    """HiGHS stopped on a numerical or internal failure, without a design: not a time limit."""


class AuditFailure(Exception):
    """An emitted design failed the independent audit; ``violations`` lists each failed check."""

    def __init__(self, violations: list[str]):
        self.violations = list(violations)
        super().__init__("\n".join(self.violations))
