"""README.md stays true: its workbook contract is the one the schema generates; it names every command."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_contract():
    spec = importlib.util.spec_from_file_location("readme_contract", ROOT / "scripts" / "readme_contract.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_contract_section_is_generated_from_the_schema():
    rc = readme_contract()
    text = rc.README.read_text(encoding="utf-8")
    assert rc.current(text) == rc.generated(), "README.md is out of date: run python scripts/readme_contract.py"
    assert rc.render(text) == text


def test_contract_lists_every_sheet_and_column():
    from designer.inputs.schema import SHEETS

    section = readme_contract().current((ROOT / "README.md").read_text(encoding="utf-8"))
    for name, sheet in SHEETS.items():
        assert f"### `{name}`" in section
        for field in sheet.fields:
            assert f"| `{field.name}` |" in section, (name, field.name)


def test_readme_names_every_command_and_the_setup():
    from designer.cli import parser

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    sub = next(a for a in parser()._actions if a.dest == "command")
    missing = [name for name in sub.choices if not re.search(rf"designer {name}\b", text)]
    assert not missing, f"README.md does not describe: designer {', designer '.join(missing)}"
    assert "make run" in text and "make test" in text
    for code in range(5):
        assert f"| {code} |" in text
