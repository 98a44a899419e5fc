"""The conformance matrix (tests/matrix/): every bad cell fails under torch as its rule says and
every safe twin runs clean; the engine reports each bad cell at its line, except the cells
tests/matrix/known.py records as missed today (with their cause) and those out of reach;
nothing is reported on a twin; docs/coverage.md is the rendering of what the engine finds."""
import os
import re

import pytest

from matrix import known
from matrix.cells import all_cells, write
from matrix.hazards import HAZARDS
from matrix.render import page, results
from matrix.shape import SHAPES
from sparselint.testing import expectation, outcome_problem, run_expecting

from conftest import ROOT

CELLS = all_cells()


def test_every_rule_family_has_a_hazard_written_in_at_least_40_shapes():
    families = {h.code[3] for h in HAZARDS}
    assert families == set("0123456")
    for h in HAZARDS:
        shapes = [c for c in CELLS if c.hazard is h]
        assert len(shapes) >= 40, h.code
        # points 1-4 of issue 18, and projects whose hazard line sits outside the entry script
        assert {c.shape.point for c in shapes} == set("1234"), h.code
        assert sum(c.bad.report_file != "main.py" for c in shapes) >= 3, h.code
        assert sum(len([f for f in c.bad.files if f.endswith(".py")]) > 1 for c in shapes) >= 15, h.code


def test_the_table_names_real_cells_and_causes():
    ids = {c.id for c in CELLS}
    missed = known.missed()
    assert set(missed) <= ids, sorted(set(missed) - ids)
    assert set(missed.values()) <= set(known.CAUSES)
    reach = {c.id for c in CELLS if c.shape.out_of_reach}
    assert not set(missed) & reach, "an out-of-reach cell is not a miss"
    assert len({s.name for s in SHAPES}) == len(SHAPES)


@pytest.mark.torch
@pytest.mark.parametrize("cell", CELLS, ids=lambda c: c.id)
def test_cell_behaves_under_torch(cell, tmp_path):
    for side, program in (("bad", cell.bad), ("twin", cell.twin)):
        entry = write(program, str(tmp_path / side))
        exp = expectation(program.files["main.py"])
        problem = outcome_problem(exp, run_expecting(entry, exp))
        assert problem is None, f"{cell.id} {side}: {problem}"


@pytest.fixture(scope="module")
def linted():
    return results()


def test_engine_finds_what_the_table_says(linted):
    """A regression (a found cell missed) and news (a recorded miss now found) both fail."""
    missed = known.missed()
    problems = []
    for r in linted:
        cid = r.cell.id
        if r.cell.shape.out_of_reach:
            if r.found:
                problems.append(f"{cid}: reported, but its shape is out of reach ({r.cell.shape.out_of_reach})")
        elif cid in missed and r.found:
            problems.append(f"{cid}: now found: remove it from MISSED in tests/matrix/known.py")
        elif cid not in missed and not r.found:
            problems.append(f"{cid}: regression: expected {r.expected}, got {[str(f) for f in r.bad]}")
    assert not problems, "\n".join(problems)


def test_twins_lint_clean_except_recorded_false_alarms(linted):
    recorded = {(shape, code): found for shape, code, found in known.FALSE_ALARMS}
    actual = {(r.cell.shape.name, r.cell.hazard.code): ", ".join(str(f) for f in r.twin) for r in linted if r.twin}
    assert actual == recorded


def test_coverage_page_is_current(linted):
    with open(os.path.join(ROOT, "docs", "coverage.md"), encoding="utf-8") as fh:
        on_disk = fh.read()
    assert on_disk == page(linted), "docs/coverage.md is stale: run `python -m sparselint.docs`"
    assert re.search(r"^\| all \| \| \d+ \| \d+ \(\d+%\)", on_disk, re.M)
