"""Every rule documents itself the same way, and the README's table is generated from them."""
import os
import re

import pytest

from sparselint.docs import START, END, rule_pages, update_readme
from sparselint.rule import HEADINGS, all_rules, doc_sections

from conftest import ROOT

RULES = all_rules()


def test_rules_are_found_by_import_not_by_a_list():
    codes = [r.code for r in RULES]
    assert len(codes) == len(set(codes)) >= 15
    files = [f for f in os.listdir(os.path.join(ROOT, "rules")) if re.match(r"spl\d{3}_", f)]
    assert len(files) == len(RULES)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_doc_has_the_fixed_headings(rule):
    sections = doc_sections(rule.doc())
    assert list(sections) == list(HEADINGS), rule.code
    assert all(sections[h].strip() for h in HEADINGS), rule.code


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_metadata(rule):
    assert re.fullmatch(r"SPL\d{3}", rule.code)
    assert re.fullmatch(r"[a-z]+(-[a-z]+)+", rule.name)
    assert rule.error and rule.when in ("line", "backward", "step", "silent", "construct")
    assert rule.hazards, "every rule names the hazards that prove it"
    module = os.path.basename(__import__(rule.__module__, fromlist=["x"]).__file__)
    assert module.startswith(rule.code.lower() + "_")
    if rule.fix_title:
        assert "Fix safety" in doc_sections(rule.doc())


def test_readme_rule_table_is_current():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    assert START in text and END in text
    assert update_readme(text) == text, "README rule table is stale: run `python -m sparselint.docs`"


def test_rule_reference_pages_are_current():
    folder = os.path.join(ROOT, "docs", "rules")
    pages = rule_pages()
    on_disk = sorted(f for f in os.listdir(folder) if f.endswith(".md"))
    assert on_disk == sorted(pages), "docs/rules is stale: run `python -m sparselint.docs`"
    for name, content in pages.items():
        with open(os.path.join(folder, name), encoding="utf-8") as fh:
            assert fh.read() == content, f"docs/rules/{name} is stale: run `python -m sparselint.docs`"


def test_readme_fix_column_matches_the_fixes_the_cli_offers(cli):
    """The README's "fix" column says what `--output-format json` really reports for each rule's
    bad fixtures (SPL501's fix is unsafe, whatever capitalisation its doc uses)."""
    import json
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        rows = [row.split("|") for row in fh.read().split(START)[1].split(END)[0].splitlines()
                if row.startswith("| SPL")]
    table = {cells[1].strip(): cells[-2].strip() for cells in rows}
    for rule in RULES:
        if not rule.fix_title:
            assert table[rule.code] == "", rule.code
            continue
        folder = os.path.join(ROOT, "fixtures", rule.code)
        bad = [os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith("_bad.py")]
        found = json.loads(cli("--no-cache", "--select", rule.code, "--output-format", "json", *bad).stdout)
        kinds = {d["fix"]["applicability"] for d in found if d["fix"]}
        assert kinds, rule.code
        assert table[rule.code] == " or ".join(k for k in ("safe", "unsafe") if k in kinds), rule.code
    assert table["SPL501"] == "unsafe"


def test_rule_codes_and_names_read_from_module_names_match_the_rules():
    """Selection and the cache key read codes and names from module names, without
    importing a rule (a warm run never imports LibCST): the names must say the truth."""
    from sparselint.rule import all_rules, rule_index
    assert rule_index() == tuple((r.code, r.name) for r in all_rules())
