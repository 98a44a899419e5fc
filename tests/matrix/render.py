"""docs/coverage.md: the matrix as the engine sees it, rendered by `python -m sparselint.docs`."""
from __future__ import annotations

import tempfile
from collections import Counter, defaultdict

from . import known
from .cells import all_cells
from .hazards import HAZARDS
from .lint import Result, lint_all
from .shape import SHAPES


def results() -> list[Result]:
    with tempfile.TemporaryDirectory() as folder:
        return lint_all(all_cells(), folder)


def status(result: Result) -> str:
    """"found", "out of reach", or "missed" (the cause from known.py when it is recorded)."""
    if result.found:
        return "found"
    if result.cell.shape.out_of_reach:
        return "out of reach"
    return "missed"


def page(rs: list[Result]) -> str:
    causes = known.missed()
    codes = [h.code for h in HAZARDS]
    by_cell = {(r.cell.hazard.code, r.cell.shape.name): r for r in rs}
    count = defaultdict(Counter)
    for r in rs:
        count[r.cell.hazard.code][status(r)] += 1
        count[r.cell.hazard.code]["twin alarms"] += bool(r.twin)
    out = ["# Conformance matrix", "",
           "How much of the language the engine models, measured: each hazard (one or more per rule family) is",
           "written in many code shapes, each carrying the fact-bearing value from its source to the line",
           "that fails through one form of the language, in one file or across the modules of a small project.",
           "Every cell is a bad program that fails under torch as the rule says and a safe twin that runs",
           "clean (`tests/test_matrix.py` runs both); the engine must report the bad one at its line. A miss",
           "names the first language form the engine does not follow yet (`tests/matrix/known.py`); a cell",
           "decided by what the program reads at run time is out of reach. Generated from `tests/matrix/` by",
           "`python -m sparselint.docs`; add shapes there, and record what the engine misses.", "",
           "## Totals", "",
           "| hazard | what fails | bad cells | found | missed | out of reach | false alarms on twins |",
           "|---|---|---|---|---|---|---|"]
    total = Counter()
    for h in HAZARDS:
        c = count[h.code]
        cells = c["found"] + c["missed"] + c["out of reach"]
        total.update(c)
        total["cells"] += cells
        out.append(f"| {h.code} | {h.title} | {cells} | {c['found']} | {c['missed']} | {c['out of reach']} "
                   f"| {c['twin alarms']} |")
    out.append(f"| all | | {total['cells']} | {total['found']} ({100 * total['found'] // total['cells']}%) "
               f"| {total['missed']} | {total['out of reach']} | {total['twin alarms']} |")
    groups = defaultdict(list)
    for r in rs:
        if status(r) == "missed":
            groups[causes.get(r.cell.id, "not recorded")].append(r)
    out += ["", "## Misses by cause", "", "| cells | cause | shapes |", "|---|---|---|"]
    for cause, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shapes = ", ".join(f"`{s}`" for s in dict.fromkeys(r.cell.shape.name for r in members))
        text = known.CAUSES.get(cause, "not recorded in tests/matrix/known.py")
        out.append(f"| {len(members)} | **{cause}**: {text} | {shapes} |")
    out += ["", "## Cells", "",
            "`found`: reported at its line; a cause: missed, see above; `reach`: out of reach; `-`: the shape",
            "does not apply to the hazard. Point: the point of issue 18 the shape covers (1 expressions,",
            "2 bindings, 3 objects, 4 calls); files: how many modules the program has.", "",
            "| shape | form | point | files | " + " | ".join(codes) + " |",
            "|---|---|---|---|" + "---|" * len(codes)]
    for s in SHAPES:
        row = []
        files = 0
        for code in codes:
            r = by_cell.get((code, s.name))
            if r is None:
                row.append("-")
                continue
            files = sum(name.endswith(".py") for name in r.cell.bad.files)
            st = status(r)
            row.append({"found": "found", "out of reach": "reach"}.get(st) or causes.get(r.cell.id, "missed"))
        form = s.form.replace("|", "\\|")
        out.append(f"| `{s.name}` | {form} | {s.point} | {files} | " + " | ".join(row) + " |")
    reach = [s for s in SHAPES if s.out_of_reach]
    out += ["", "## Out of reach", ""]
    out += [f"- `{s.name}`: {s.out_of_reach}." for s in reach]
    alarms = [r for r in rs if r.twin]
    out += ["", "## False alarms on safe twins", ""]
    if alarms:
        out += [f"- `{r.cell.id}`: " + ", ".join(str(f) for f in r.twin) for r in alarms]
    else:
        out.append(f"None: the engine reports nothing on any of the {len(rs)} safe twins.")
    return "\n".join(out) + "\n"
