"""One cell to a typed value against its schema field: numbers, booleans, choices, name lists; the fix to offer
when it cannot be read; "did you mean" suggestions."""

from __future__ import annotations

import difflib

from designer.errors import Problem
from designer.inputs.reader import Bad
from designer.inputs.schema import Field

_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}


def typed_value(field: Field, raw, label: str, cell: str, problems: list[Problem]):
    """The typed value of one cell, its default when blank, or None after reporting a problem."""
    if isinstance(raw, Bad):
        problems.append(Problem(label, cell, field.name, raw.value, raw.message, raw.fix))
        return None
    if raw is not None:
        try:
            value = _CONVERT[field.type](field, raw)
        except ValueError as exc:
            message, *fix = exc.args
            problems.append(Problem(label, cell, field.name, raw, message,
                                    fix[0] if fix else fix_for(field)))
            return None
        if value != []:
            return value
    if field.required:
        problems.append(Problem(label, cell, field.name, None, "is blank but required",
                                fix_for(field)))
        return None
    return field.default


def fix_for(field: Field) -> str:
    if field.type in ("enum", "names") and field.allowed:
        return "use " + field.expectation()
    unit = f" in {field.unit}" if field.unit and field.type in ("int", "float") else ""
    example = f", e.g. {field.example}" if field.example is not None else ""
    return f"enter {field.expectation()}{unit}{example}"


def as_text(raw) -> str:
    if isinstance(raw, float) and raw.is_integer():
        return str(int(raw))
    return str(raw).strip()


def _number(field: Field, raw, whole: bool):
    problem = ValueError(f"must be {field.expectation()}")
    if isinstance(raw, bool):
        raise problem
    if isinstance(raw, str):
        try:
            raw = float(raw)
        except ValueError:
            raise problem from None
    if not isinstance(raw, (int, float)) or raw != raw or raw in (float("inf"), float("-inf")):
        raise problem
    if whole and not float(raw).is_integer():
        raise problem
    value = int(raw) if whole else float(raw)
    if not field.in_range(value):
        raise problem
    return value


def _bool(field: Field, raw) -> bool:
    text = as_text(raw).lower() if not isinstance(raw, bool) else str(raw).lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ValueError(f"must be {field.expectation()}")


def _enum(field: Field, raw) -> str:
    text = as_text(raw).lower()
    if text not in field.allowed:
        raise ValueError(f"must be {field.expectation()}",
                         suggest(text, field.allowed) or fix_for(field))
    return text


def _names(field: Field, raw) -> list[str]:
    names = list(dict.fromkeys(part.strip() for part in as_text(raw).split(",") if part.strip()))
    if field.allowed:
        names = [n.lower() for n in names]
        for name in names:
            if name not in field.allowed:
                hint = suggest(name, field.allowed)
                raise ValueError(f"has unknown entry '{name}'",
                                 (f"{hint} " if hint else "") + fix_for(field))
    return names


_CONVERT = {
    "str": lambda field, raw: as_text(raw),
    "int": lambda field, raw: _number(field, raw, whole=True),
    "float": lambda field, raw: _number(field, raw, whole=False),
    "bool": _bool,
    "enum": _enum,
    "names": _names,
}


def suggest(word: str, choices) -> str:
    """'did you mean ...?' for the closest choice, ignoring case; "" when none is close."""
    lowered = {str(c).lower(): c for c in choices}
    match = difflib.get_close_matches(str(word).lower(), list(lowered), n=1, cutoff=0.6)
    return f"did you mean '{lowered[match[0]]}'?" if match else ""
