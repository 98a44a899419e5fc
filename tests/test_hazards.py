"""A reference check, when the catalog the hazards were first recorded in (../shared/hazards,
beside the original checkout) is there: its scripts and write-ups, linted as they are.
Without it these tests are skipped with that reason; the hazards themselves are covered by
this repository's own fixtures (test_catalog.py, test_fixtures.py)."""
import os

import pytest

from sparselint.config import Settings
from sparselint.engine import check_text

from conftest import HAZARDS

# hazard number -> catalog code, for the families built so far
CATALOG = {
    "01": "SPL001", "02": "SPL001", "03": "SPL001", "04": "SPL001", "47": "SPL001",
    "14": "SPL002", "13": "SPL003", "53": "SPL004",
    "05": "SPL101", "06": "SPL101", "38": "SPL101", "48": "SPL101",
    "09": "SPL102", "10": "SPL103", "07": "SPL104", "08": "SPL105", "44": "SPL105",
    "11": "SPL106", "45": "SPL107", "52": "SPL108",
    "12": "SPL201", "50": "SPL202", "51": "SPL203",
    "16": "SPL301", "17": "SPL301", "15": "SPL302", "18": "SPL302", "25": "SPL303",
    "19": "SPL401", "20": "SPL401", "21": "SPL402", "22": "SPL402", "23": "SPL403", "24": "SPL404",
    "27": "SPL504",
    "26": "SPL501", **{n: "SPL502" for n in ("28", "29", "30", "31", "32", "33", "34", "35", "36")},
    "37": "SPL503", "46": "SPL505", "39": "SPL506", "40": "SPL506", "41": "SPL506",
    "42": "SPL507", "43": "SPL507", "49": "SPL603",
}
WRITEUPS = {"A0": [], "B1": [], "A2": [("SPL202", 15)], "B0": [("SPL001", 10)],
            "B4": [("SPL201", 13)], "B5": [("SPL201", 13), ("SPL201", 19)],
            "A1": [("SPL603", 23), ("SPL601", 35)], "A1_fixed": [("SPL603", 23)],
            "B2": [("SPL602", 8)], "B3": [("SPL602", 8)]}

_absent = pytest.mark.skipif(not os.path.isdir(HAZARDS),
                             reason="reference check: ../shared/hazards is not beside this checkout")


def needs_shared(test):
    return pytest.mark.reference(_absent(test))


def test_the_reference_mapping_is_the_rules_own():
    from sparselint.rule import all_rules
    assert CATALOG == {n: r.code for r in all_rules() for n in r.hazards if n.isdigit()}


def lint(path):
    with open(path, encoding="utf-8") as fh:
        diags, _, _ = check_text(fh.read(), path, Settings())
    return diags


def hazard_file(number, kind):
    names = [f for f in os.listdir(HAZARDS) if f.startswith(number + "_") and f.endswith(f"_{kind}.py")]
    assert len(names) == 1, names
    return os.path.join(HAZARDS, names[0])


@needs_shared
@pytest.mark.parametrize("number,code", sorted(CATALOG.items()))
def test_bad_hazard_is_flagged_with_its_catalog_code(number, code):
    codes = {d.code for d in lint(hazard_file(number, "bad"))}
    assert codes == {code}


@needs_shared
@pytest.mark.parametrize("number", sorted(CATALOG))
def test_good_hazard_is_clean(number):
    assert lint(hazard_file(number, "good")) == []


@needs_shared
@pytest.mark.parametrize("block,expected", sorted(WRITEUPS.items()))
def test_writeup_blocks_as_torch_behaves(block, expected):
    diags = lint(os.path.join(HAZARDS, "writeups", block + ".py"))
    assert sorted((d.line, d.code) for d in diags) == sorted((line, code) for code, line in expected)


@needs_shared
def test_every_hazard_of_the_catalog_is_covered():
    numbers = {f[:2] for f in os.listdir(HAZARDS) if f.endswith("_bad.py")}
    assert numbers == set(CATALOG), sorted(numbers ^ set(CATALOG))
