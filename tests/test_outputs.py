"""Machine-readable outputs: SARIF validated against the SARIF 2.1.0 schema, GitLab, JSON."""
import json
import os

import jsonschema

from conftest import ROOT

SCHEMA = os.path.join(ROOT, "tests", "data", "sarif-2.1.0-rtm.5.json")
BAD = ("import torch\nadj = torch.sparse_coo_tensor(e, torch.ones(2), (2, 2))\nprint(adj.indices().max())\n"
       "s = torch.eye(3).to_sparse().requires_grad_()\ns.values().mul_(2)\n")


def test_sarif_is_valid_and_complete(cli, tmp_path):
    (tmp_path / "my model.py").write_text(BAD)
    (tmp_path / "broken.py").write_text("import torch\nx = torch.sparse_coo_tensor(\n")
    r = cli("--no-cache", "--output-format", "sarif", str(tmp_path))
    assert r.returncode == 1
    log = json.loads(r.stdout)
    with open(SCHEMA) as fh:
        jsonschema.Draft4Validator(json.load(fh)).validate(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {"SPL001", "SPL102", "SPL603"} <= {rule["id"] for rule in rules}
    assert all(rule["shortDescription"]["text"] and rule["help"]["text"] for rule in rules)
    by_rule = {res["ruleId"]: res for res in run["results"]}
    spl001 = by_rule["SPL001"]
    assert rules[spl001["ruleIndex"]]["id"] == "SPL001"
    assert spl001["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("my%20model.py")
    assert spl001["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    assert spl001["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 2
    replacement = spl001["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["insertedContent"]["text"] == "adj.coalesce().indices()"
    assert "(unsafe)" in by_rule["SPL102"]["fixes"][0]["description"]["text"]
    assert "SPL900" in by_rule


def test_gitlab_code_quality(cli, tmp_path):
    (tmp_path / "m.py").write_text(BAD)
    report = json.loads(cli("--no-cache", "--output-format", "gitlab", str(tmp_path / "m.py")).stdout)
    assert [(f["check_name"], f["location"]["lines"]["begin"]) for f in report] == [("SPL001", 3), ("SPL102", 5)]
    assert len({f["fingerprint"] for f in report}) == 2 and all(f["severity"] == "major" for f in report)


def test_statistics_and_show_fixes_keep_stdout_parseable(cli, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(BAD)
    r = cli("--no-cache", "--statistics", "--output-format", "json", str(path))
    assert json.loads(r.stdout) == [
        {"code": "SPL001", "name": "values-on-uncoalesced", "count": 1, "fixable": True},
        {"code": "SPL102", "name": "inplace-on-leaf-values", "count": 1, "fixable": False}]
    for fmt in ("sarif", "gitlab"):
        r = cli("--no-cache", "--statistics", "--output-format", fmt, str(path))
        json.loads(r.stdout)  # the findings, parseable; the table goes to stderr
        assert "SPL001  [*] values-on-uncoalesced" in r.stderr
    r = cli("--no-cache", "--statistics", "--output-format", "github", str(path))
    assert all(l.startswith("::error ") for l in r.stdout.splitlines()), r.stdout
    # --statistics alone: the table, not the findings
    r = cli("--no-cache", "--statistics", str(path))
    assert "    1  SPL001  [*] values-on-uncoalesced" in r.stdout and "m.py:3:" not in r.stdout
    for fmt in ("json", "sarif", "gitlab"):
        path.write_text(BAD)
        r = cli("--fix", "--show-fixes", "--output-format", fmt, str(path))
        json.loads(r.stdout)
        assert f"{path}: 1 x SPL001" in r.stderr


def test_sarif_uris_are_file_uris_for_absolute_paths(cli, tmp_path):
    (tmp_path / "my model.py").write_text(BAD)
    log = json.loads(cli("--no-cache", "--output-format", "sarif", str(tmp_path / "my model.py")).stdout)
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == (tmp_path / "my model.py").as_uri() and uri.startswith("file:///") and "%20" in uri
    log = json.loads(cli("--no-cache", "--output-format", "sarif", "my model.py", cwd=tmp_path).stdout)
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "my%20model.py"  # relative stays relative to the checkout, as code scanning wants
