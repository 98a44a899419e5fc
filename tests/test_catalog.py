"""The hazard catalog ships with the project: every hazard is reproduced by this repository's
own fixtures (a bad one that fails under torch, a good one that runs clean; the torch runs are
in test_fixtures.py), docs/hazards.md lists them, and what the CLI prints cites nothing that
is not shipped. The catalog beside a checkout (../shared/hazards) is only a reference to check
against when present (test_hazards.py)."""
import os
import re

import pytest

from sparselint.docs import hazard_fixtures, hazard_page
from sparselint.rule import all_rules
from sparselint.testing import expected_findings

from conftest import FIXTURES, HAZARDS, ROOT

CATALOG = hazard_fixtures(FIXTURES)
CLAIMED = {n: r.code for r in all_rules() for n in r.hazards if n.isdigit()}


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
        return fh.read()


def test_the_catalog_is_numbered_without_gaps():
    numbers = sorted(int(n) for n in CATALOG)
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 53, numbers
    assert set(CLAIMED) == set(CATALOG), sorted(set(CLAIMED) ^ set(CATALOG))


@pytest.mark.parametrize("number", sorted(CATALOG))
def test_every_hazard_has_its_own_bad_and_good_fixture(number):
    entry = CATALOG[number]
    assert entry["bad"] and entry["good"], (number, entry)
    rule = CLAIMED[number]
    assert any((rule in {code for _, code in expected_findings(read(p))}) for p in entry["bad"]), (number, rule)
    for path in entry["good"]:
        assert not expected_findings(read(path)), path


def test_the_catalog_page_is_current():
    assert read("docs/hazards.md") == hazard_page(FIXTURES), "docs/hazards.md is stale: run `python -m sparselint.docs`"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_command_cites_only_what_ships(cli, rule):
    text = cli("rule", rule.code).stdout
    # no path outside the repository (`../shared/hazards/`); the word itself may be prose
    assert "CATALOG.md" not in text and "../" not in text and "shared/" not in text
    refs = text.split("## References", 1)[1]
    for numbers in re.findall(r"hazards? ([0-9][0-9, to]*[0-9])", refs):
        cited = re.findall(r"\d\d", numbers)
        assert cited and all(n in CATALOG for n in cited), (rule.code, numbers)
        assert "`docs/hazards.md`" in refs
    if "write-up" in refs:
        assert "`fixtures/writeups/`" in refs


def test_readme_points_only_inside_the_repository():
    text = read("README.md")
    assert "../" not in text, [l for l in text.splitlines() if "../" in l]
    for path in set(re.findall(r"`((?:fixtures|docs|benchmarks|examples|tests|sparselint|rules)/[^`\s]*)`", text)):
        assert os.path.exists(os.path.join(ROOT, path.rstrip("/"))), path
    assert os.path.exists(os.path.join(ROOT, "docs", "hazards.md"))


@pytest.mark.reference
@pytest.mark.skipif(not os.path.isdir(HAZARDS), reason="reference check: ../shared/hazards is not beside this checkout")
def test_the_shipped_catalog_matches_the_reference_when_present():
    numbers = {f[:2] for f in os.listdir(HAZARDS) if f.endswith("_bad.py")}
    assert numbers == set(CATALOG)
