"""The blank planner workbook: every sheet and column, a note per column, drop-down lists.

The project sheet lists every key (defaults filled in), sites/routes/floorplan/workload are empty and the
catalog sheets hold the default catalog for the planner to edit. Filling in gpus_required,
node_type and one site gives a workbook that loads without problems.
"""

from __future__ import annotations

from pathlib import Path

from openpyxl.comments import Comment
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.datavalidation import DataValidation

from designer.inputs.schema import PROJECT, SHEETS, WORKLOAD, Field, Sheet
from designer.inputs.workbook import load_catalog
from designer.inputs.writer import build_workbook

LAST_ROW = 1000
_BOOL_LIST = '"TRUE,FALSE"'


def write_template(path: str | Path) -> Path:
    """Write the blank workbook to ``path`` and return the path."""
    tables: dict[str, object] = {
        "project": {f.name: f.default for f in PROJECT.fields},
        "sites": [], "routes": [], "floorplan": [], "cloud": [],
        "workload": {f.name: None for f in WORKLOAD.fields},
        **load_catalog(),
    }
    book = build_workbook(tables)
    for sheet in book.worksheets:
        spec = SHEETS[sheet.title]
        for cell in sheet[1]:
            cell.font = Font(bold=True)
        sheet.freeze_panes = "A2"
        if spec.kind == "keys":
            _decorate_keys(sheet, spec)
        else:
            _decorate_table(sheet, spec)
    path = Path(path)
    book.save(path)
    return path


def _decorate_table(sheet, spec: Sheet) -> None:
    for i, field in enumerate(spec.fields, start=1):
        letter = get_column_letter(i)
        sheet[f"{letter}1"].comment = _note(field)
        sheet.column_dimensions[letter].width = max(12, len(field.name) + 4)
        _validate(sheet, field, f"{letter}2:{letter}{LAST_ROW}")


def _decorate_keys(sheet, spec: Sheet) -> None:
    sheet.column_dimensions["A"].width = 26
    sheet.column_dimensions["B"].width = 30
    for row in range(2, sheet.max_row + 1):
        field = spec.field(sheet[f"A{row}"].value)
        sheet[f"A{row}"].comment = _note(field)
        _validate(sheet, field, f"B{row}")


_NOTATIONS = {"share": "also read: a percentage (12.5% is 0.125)", "ratio": "also read: a ratio (2:1 is 2)"}


def _note(field: Field) -> Comment:
    """The header's comment: what the column holds, its range and unit, the notations read, its default."""
    lines = [field.description, f"type: {field.expectation()}"]
    if field.unit:
        lines.append(f"unit: {field.unit}")
    if field.notation:
        lines.append(_NOTATIONS[field.notation])
    lines.append("required" if field.required else
                 f"default: {'blank' if field.default is None else field.default}")
    comment = Comment("\n".join(lines), "designer")
    comment.width, comment.height = 320, 50 + 20 * len(lines)
    return comment


def _validate(sheet, field: Field, cells: str) -> None:
    """A drop-down list on ``cells`` when the field's values come from a list."""
    if field.type == "enum":
        source = '"' + ",".join(field.allowed) + '"'
    elif field.type == "bool":
        source = _BOOL_LIST
    elif field.type == "str" and field.ref:
        target = SHEETS[field.ref]
        letter = get_column_letter(target.columns.index(target.key) + 1)
        source = f"{target.name}!${letter}$2:${letter}${LAST_ROW}"
    else:
        return
    rule = DataValidation(type="list", formula1=source, allow_blank=True, showErrorMessage=True,
                          errorTitle=field.name, error=f"{field.name} must be "
                          f"{field.expectation()}")
    rule.add(cells)
    sheet.add_data_validation(rule)
