"""Tests generated from the examples each rule keeps beside its code."""
import pytest

from sparselint.config import Settings
from sparselint.engine import check_text
from sparselint.rule import all_rules
from sparselint.testing import expected_findings

VALID = [(r.code, i, src) for r in all_rules() for i, src in enumerate(r.valid)]
INVALID = [(r.code, i, src) for r in all_rules() for i, src in enumerate(r.invalid)]


def findings(code, source):
    diags, _, _ = check_text(source, "example.py", Settings(select=(code,)))
    return sorted((d.line, d.code) for d in diags)


@pytest.mark.parametrize("code,index,source", VALID)
def test_valid_example_is_silent(code, index, source):
    assert findings(code, source) == []


@pytest.mark.parametrize("code,index,source", INVALID)
def test_invalid_example_is_flagged_where_marked(code, index, source):
    assert findings(code, source) == sorted(expected_findings(source).elements())


def test_every_rule_has_examples():
    for rule in all_rules():
        assert rule.valid and rule.invalid, rule.code
