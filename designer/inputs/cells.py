"""One cell to a typed value against its schema field: numbers (with the notations planners type), booleans,
choices, name lists; each reading of another notation echoed as a Notice; the fix to offer when a cell cannot
be read; "did you mean" suggestions.

Read: ``4,000`` (thousands separators), ``$20,000,000`` in a USD column, a unit suffix equal to the column's
(``2 km``, ``50 MW``, ``$60/MWh``), ``25%`` in a share column, ``2:1`` in a ratio column, case and spacing in
choices and booleans (``Min Cost``, `` Required ``). Refused, with the fix: what stays ambiguous (``50k``,
``2 miles`` in a km column, ``1.000,5``, ``25%`` where the column is not a share)."""

from __future__ import annotations

import difflib
import math
import re

from designer.errors import Notice, Problem
from designer.inputs.reader import Bad
from designer.inputs.schema import Field

_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}

_PLAIN = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_GROUPED = re.compile(r"[+-]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?")
_NUMBER_THEN_UNIT = re.compile(r"([+-]?[0-9.,]*[0-9](?:[eE][+-]?[0-9]+)?)\s*([^0-9\s.,].*)?")
_RATIO = re.compile(r"([^:]+):([^:]+)")


def typed_value(field: Field, raw, label: str, cell: str, problems: list[Problem],
                notices: list[Notice] | None = None):
    """The typed value of one cell, its default when blank, or None after reporting a problem.

    A value read from another notation than the plain one ('4,000', '25%', 'Min Cost') adds a Notice to
    ``notices`` when a list is given."""
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
            if notices is not None and (reading := _reading(field, raw, value)):
                notices.append(Notice(label, cell, field.name, reading))
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
    """A number within the field's range; checked before any conversion (an int may be huge)."""
    problem = ValueError(f"must be {field.expectation()}")
    if isinstance(raw, str):
        raw = _number_text(field, raw.strip())
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) \
            or (isinstance(raw, float) and not math.isfinite(raw)) or not field.in_range(raw):
        raise problem
    if whole and isinstance(raw, float) and not raw.is_integer():
        raise problem
    return int(raw) if whole else float(raw)


def _number_text(field: Field, text: str) -> float:
    """A number typed as text: plain, or in a notation this column admits (module docstring)."""
    if _PLAIN.fullmatch(text):
        return float(text)
    if text.endswith("%"):
        if field.notation != "share":
            raise ValueError(f"is a percentage, but {field.name} is not a share", fix_for(field))
        return _digits(field, text[:-1].strip()) / 100
    if (ratio := _RATIO.fullmatch(text)) and field.notation == "ratio":
        down, up = _digits(field, ratio[1].strip()), _digits(field, ratio[2].strip())
        if up <= 0:
            raise ValueError("is a ratio whose second term is not positive", fix_for(field))
        return down / up
    if _RATIO.fullmatch(text):
        raise ValueError(f"is a ratio, but {field.name} is not one", fix_for(field))
    units = {"", field.unit}
    if text.startswith("$"):
        if not field.unit.startswith("USD"):
            raise ValueError(f"has a $ sign, but {field.name} is not in USD", fix_for(field))
        text = text[1:].strip()
        units.add(field.unit[len("USD"):])  # '$60/MWh' in a USD/MWh column
    match = _NUMBER_THEN_UNIT.fullmatch(text)
    if not match:
        raise ValueError(f"must be {field.expectation()}")
    number, unit = match[1], (match[2] or "").strip()
    if unit not in units:
        raise ValueError(*_unit_problem(field, unit))
    return _digits(field, number)


def _digits(field: Field, text: str) -> float:
    """A number written with digits, a decimal point and, optionally, commas between thousands."""
    if _PLAIN.fullmatch(text):
        return float(text)
    if _GROUPED.fullmatch(text):
        return float(text.replace(",", ""))
    raise ValueError("is ambiguous: a ',' or '.' here could be a decimal mark or a thousands separator",
                     f"write '.' for decimals and ',' only between groups of three digits, e.g. 1000.5 or "
                     f"1,000.5; {fix_for(field)}")


def _unit_problem(field: Field, unit: str) -> tuple[str, str]:
    if field.unit:
        return (f"has the unit or suffix '{unit}', but {field.name} is in {field.unit}",
                f"convert to {field.unit} and enter the number alone or with '{field.unit}'"
                + (f", e.g. {field.example}" if field.example is not None else ""))
    return f"has the suffix '{unit}', but {field.name} is a plain number", fix_for(field)


def _bool(field: Field, raw) -> bool:
    text = as_text(raw).lower() if not isinstance(raw, bool) else str(raw).lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ValueError(f"must be {field.expectation()}")


def _choice(text: str) -> str:
    """A choice as the schema spells it: lower case, inner spaces as '_' ('Min Cost' -> 'min_cost')."""
    return "_".join(text.lower().split())


def _enum(field: Field, raw) -> str:
    text = _choice(as_text(raw))
    if text not in field.allowed:
        raise ValueError(f"must be {field.expectation()}",
                         suggest(text, field.allowed) or fix_for(field))
    return text


def _text(field: Field, raw) -> str:
    text = as_text(raw)
    if len(text) > field.max_chars:
        raise ValueError(f"is {len(text):,} characters long, at most {field.max_chars:,}", "shorten it")
    return text


def _names(field: Field, raw) -> list[str]:
    names = list(dict.fromkeys(part.strip() for part in as_text(raw).split(",") if part.strip()))
    if field.allowed:
        names = list(dict.fromkeys(_choice(n) for n in names))
        for name in names:
            if name not in field.allowed:
                hint = suggest(name, field.allowed)
                raise ValueError(f"has unknown entry '{name}'",
                                 (f"{hint} " if hint else "") + fix_for(field))
    return names


_CONVERT = {
    "str": lambda field, raw: _text(field, raw),
    "int": lambda field, raw: _number(field, raw, whole=True),
    "float": lambda field, raw: _number(field, raw, whole=False),
    "bool": _bool,
    "enum": _enum,
    "names": _names,
}


def _reading(field: Field, raw, value) -> str:
    """'read X as Y' when a text cell was read from another notation than the value's own; else ''."""
    if not isinstance(raw, str) or field.type == "str":
        return ""
    text = raw.strip()
    if field.type in ("int", "float"):
        plain = _PLAIN.fullmatch(text)
        shown = str(int(value)) if float(value).is_integer() else repr(value)
    elif field.type == "bool":
        plain = text in _TRUE | _FALSE
        shown = str(value).lower()
    elif field.type == "enum":
        plain, shown = text == value, repr(value)
    else:
        plain = ",".join(value) == ",".join(p.strip() for p in text.split(",") if p.strip())
        shown = repr(",".join(value))
    return "" if plain else f"read {raw!r} as {shown}"


def suggest(word: str, choices) -> str:
    """'did you mean ...?' for the closest choice, ignoring case; "" when none is close."""
    lowered = {str(c).lower(): c for c in choices}
    match = difflib.get_close_matches(str(word).lower(), list(lowered), n=1, cutoff=0.6)
    return f"did you mean '{lowered[match[0]]}'?" if match else ""
