"""Regenerate README.md's workbook contract from the schema (designer.schema.contract_markdown).

The section between ``<!-- contract:start -->`` and ``<!-- contract:end -->`` is generated; the rest of
the README is written by hand. Run ``python scripts/readme_contract.py`` after changing the schema,
or ``--check`` to exit 1 when the README is out of date (tests/test_readme.py does the same check).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from designer.inputs.schema import contract_markdown  # noqa: E402

README = ROOT / "README.md"
START, END = "<!-- contract:start -->", "<!-- contract:end -->"


def _split(text: str) -> tuple[str, str, str]:
    """(before and including the start marker, the section, the end marker and after)."""
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise ValueError(f"README.md must hold exactly one {START} ... {END} pair, in that order")
    head, rest = text.split(START)
    section, tail = rest.split(END)
    return head + START, section, END + tail


def generated() -> str:
    """The section as the schema renders it, with the blank lines around it."""
    return "\n" + contract_markdown().strip("\n") + "\n\n"


def current(text: str) -> str:
    return _split(text)[1]


def render(text: str) -> str:
    """The README text with its contract section regenerated."""
    head, _, tail = _split(text)
    return head + generated() + tail


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--check", action="store_true", help="exit 1 when README.md is out of date, write nothing")
    opts = args.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    new = render(text)
    if opts.check:
        if new != text:
            print("README.md: the workbook contract is out of date; run python scripts/readme_contract.py",
                  file=sys.stderr)
            return 1
        return 0
    if new != text:
        README.write_text(new, encoding="utf-8")
        print("README.md: workbook contract regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
