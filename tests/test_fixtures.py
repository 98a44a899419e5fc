"""The fixture contract: every fixture's inline marks are exactly what the linter reports,
every fixture behaves under torch as its header says, and every fix is proven by running
the fixed code."""
import os
import shutil
from collections import Counter

import pytest

from sparselint.config import Settings
from sparselint.engine import check_text
from sparselint.testing import (actual_findings, expectation, expected_findings, findings_elsewhere, fix_outcomes,
                                outcome_problem, run_expecting, run_notebook, run_script)

from conftest import FIXTURES, all_fixtures, run_cli
from sparselint.testing import has_expectation

FIXTURE_FILES = all_fixtures()


def read(rel):
    with open(os.path.join(FIXTURES, rel), encoding="utf-8") as fh:
        return fh.read()


def test_there_are_fixtures_for_every_rule():
    from sparselint.rule import all_rules
    groups = {f.split(os.sep)[0] for f in FIXTURE_FILES}
    for rule in all_rules():
        assert rule.code in groups, f"{rule.code} has no fixtures"
        names = [f for f in FIXTURE_FILES if f.startswith(rule.code + os.sep)]
        assert any(n.endswith("_bad.py") for n in names), f"{rule.code} has no bad fixture"
        assert any(expected_findings(read(n)).get(k) for n in names for k in expected_findings(read(n))
                   if k[1] == rule.code), f"{rule.code}: no fixture marks a finding of this rule"


def _support_module(rel):
    return rel.startswith("projects" + os.sep) and not has_expectation(read(rel))


def _public_api(rel):
    """A support module of a package whose public functions are entry points: what their
    own code admits is reported on the module alone too. It says so on its first line."""
    return _support_module(rel) and read(rel).startswith("# api:")


@pytest.mark.parametrize("rel", FIXTURE_FILES)
def test_lint_matches_inline_marks(rel):
    source = read(rel)
    # A support module's marks are findings its callers' facts set off (checked below); on
    # its own, with parameters nobody passes, it is silent, unless a public function's own
    # layout test admits what fails.
    expected = Counter() if _support_module(rel) and not _public_api(rel) else expected_findings(source)
    actual = actual_findings(source, os.path.join(FIXTURES, rel))
    assert actual == expected, f"{rel}: expected {sorted(expected.elements())}, got {sorted(actual.elements())}"
    if has_expectation(source) and expectation(source).outcome == "ok" and "_bad" not in rel:
        if not rel.startswith("writeups"):
            assert not expected, f"{rel}: a clean-running fixture outside writeups/ should have no marks"


PROJECTS = sorted({rel.split(os.sep)[1] for rel in FIXTURE_FILES if rel.startswith("projects" + os.sep)})


@pytest.mark.parametrize("project", PROJECTS)
def test_findings_in_called_modules_match_their_marks(project):
    """Checking a project's entry scripts reports, inside the modules they call, exactly the
    findings marked there; once each, however many entries call them."""
    files = [rel for rel in FIXTURE_FILES if rel.split(os.sep)[:2] == ["projects", project]]
    expected = {os.path.normpath(os.path.join(FIXTURES, rel)): expected_findings(read(rel))
                for rel in files if _support_module(rel)}
    expected = {k: v for k, v in expected.items() if v}
    # a public API module's marks are all found on the module alone (above); through its
    # callers, those their facts set off, and nothing unmarked
    api = {os.path.normpath(os.path.join(FIXTURES, rel)) for rel in files if _public_api(rel)}
    seen: dict = {}
    for rel in files:
        if not _support_module(rel):
            for path, found in findings_elsewhere(read(rel), os.path.join(FIXTURES, rel)).items():
                seen[path] = seen.get(path, Counter()) | found
    for path in api:
        assert not (seen.pop(path, Counter()) - expected.pop(path, Counter())), f"{path}: unmarked findings"
    assert seen == expected


RUNNABLE = [f for f in FIXTURE_FILES if has_expectation(read(f))]


def test_support_modules_are_only_in_projects():
    for rel in FIXTURE_FILES:
        if rel not in RUNNABLE:
            assert rel.startswith("projects" + os.sep), f"{rel} has no `# expect-...` header"


@pytest.mark.torch
@pytest.mark.parametrize("rel", RUNNABLE)
def test_fixture_behaves_under_torch(rel):
    source = read(rel)
    exp = expectation(source)
    problem = outcome_problem(exp, run_expecting(os.path.join(FIXTURES, rel), exp))
    assert problem is None, f"{rel}: {problem}"


def _fully_fixable(rel):
    source = read(rel)
    diags, _, _ = check_text(source, os.path.join(FIXTURES, rel), Settings())
    return bool(diags) and all(d.fix is not None for d in diags)


FIXABLE = [f for f in FIXTURE_FILES if f.endswith("_bad.py") and _fully_fixable(f)]
# an unsafe fix that a fixture shows changing the result (a caller's tensor no longer edited,
# another caller's object without `.coalesce()`) is proven by the follow-up test instead
CLEAN_AFTER_FIX = [f for f in FIXABLE if fix_outcomes(read(f)).get("unsafe-fix") != "differs"]


def test_every_rule_with_a_fix_is_proven_by_a_fixture():
    from sparselint.rule import all_rules
    proven = set()
    for rel in FIXABLE:
        diags, _, _ = check_text(read(rel), rel, Settings())
        proven |= {d.code for d in diags}
    with_fix = {r.code for r in all_rules() if r.fix_title}
    assert with_fix <= proven, f"rules with fixes but no fully fixable fixture: {sorted(with_fix - proven)}"


@pytest.mark.torch
@pytest.mark.parametrize("rel", CLEAN_AFTER_FIX)
def test_fix_gives_code_that_lints_clean_and_runs_clean(rel, tmp_path):
    target = tmp_path / os.path.basename(rel)
    shutil.copy(os.path.join(FIXTURES, rel), target)
    fixed = run_cli("--fix", "--unsafe-fixes", str(target))
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    again = run_cli(str(target))
    assert again.returncode == 0, again.stdout
    source = target.read_text()
    assert source != read(rel)
    header_free = source.replace("# expect-error", "# was-error").replace("# expect-misbehaves", "# was-misbehaves")
    run = run_script(str(target))
    assert outcome_problem(expectation("# expect-ok\n" + header_free), run) is None, run.stderr[-500:]


@pytest.mark.parametrize("rel", [f for f in FIXTURE_FILES if not f.endswith("_bad.py") and not f.startswith("projects")])
def test_fix_changes_nothing_on_code_that_is_right(rel, tmp_path):
    """The must-not-change test of every rewrite: good and look-alike fixtures stay byte-identical."""
    target = tmp_path / os.path.basename(rel)
    shutil.copy(os.path.join(FIXTURES, rel), target)
    before = target.read_bytes()
    run_cli("--fix", "--unsafe-fixes", str(target))
    assert target.read_bytes() == before


@pytest.mark.torch
def test_no_grad_fix_is_withheld_where_backward_would_still_fail(tmp_path):
    """SPL102's fix runs the edit under `torch.no_grad()`; when a forward op already saved the
    tensor, backward then fails on the bumped version instead. The fix must not be offered
    there, or must give code that runs clean."""
    rel = os.path.join("SPL102", "rescale_after_forward_bad.py")
    target = tmp_path / os.path.basename(rel)
    shutil.copy(os.path.join(FIXTURES, rel), target)
    run_cli("--fix", "--unsafe-fixes", "--select", "SPL102", str(target))
    if target.read_text() != read(rel):
        run = run_script(str(target))
        assert run.returncode == 0, run.stderr[-500:]
    still = run_cli("--select", "SPL102", str(target))
    assert f"{target.name}:9:1: SPL102" in still.stdout, still.stdout


def _notebooks():
    out = []
    for root, dirs, files in os.walk(FIXTURES):
        dirs.sort()
        out.extend(os.path.relpath(os.path.join(root, f), FIXTURES) for f in sorted(files) if f.endswith(".ipynb"))
    return out


def _code(rel):
    """A fixture's code: a notebook's code cells, one after the other."""
    if not rel.endswith(".ipynb"):
        return read(rel)
    import json
    cells = json.loads(read(rel))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c.get("cell_type") == "code")


# Bad fixtures that say what their fixed program computes, each beside its hand-corrected twin.
FOLLOWUPS = [f for f in FIXTURE_FILES + _notebooks() if "_bad." in f and fix_outcomes(_code(f))]


def _run(path):
    return run_notebook(path) if path.endswith(".ipynb") else run_script(path)


def test_every_safe_fix_is_run_on_a_follow_up():
    """Each rule that can make a safe fix has a follow-up fixture where that safe fix goes in and
    the fixed program is compared with its corrected twin."""
    from sparselint.engine import check_notebook
    from sparselint.rule import all_rules
    from sparselint.docs import fix_applicability
    covered = set()
    for rel in FOLLOWUPS:
        if fix_outcomes(_code(rel)).get("safe-fix") != "same":
            continue
        path = os.path.join(FIXTURES, rel)
        if rel.endswith(".ipynb"):
            with open(path, "rb") as fh:
                diags = check_notebook(fh.read(), path, Settings()).diagnostics
        else:
            diags, _, _ = check_text(read(rel), path, Settings())
        covered |= {d.code for d in diags if d.fix is not None and d.fix.safe}
    safe = {r.code for r in all_rules() if "safe" in fix_applicability(r).split(" or ")}
    assert safe <= covered, f"safe fixes never run on a follow-up: {sorted(safe - covered)}"
    assert any(rel.endswith(".ipynb") for rel in FOLLOWUPS)


@pytest.mark.torch
@pytest.mark.parametrize("unsafe", [False, True], ids=["fix", "unsafe-fixes"])
@pytest.mark.parametrize("rel", FOLLOWUPS)
def test_fix_computes_what_the_corrected_program_computes(rel, unsafe, tmp_path):
    """A safe fix never changes what the program computes: applied to a bad fixture whose
    result is used afterwards (indexed, fed to dense ops, read in a function from a global, on
    a parameter, in a notebook), the fixed program prints what the hand-corrected twin prints.
    A fix whose program differs must be unsafe, and the fixture says so."""
    source = read(rel)
    outcomes = fix_outcomes(_code(rel))
    want = outcomes["unsafe-fix" if unsafe else "safe-fix"]
    if want == "differs":
        assert outcomes["safe-fix"] == "none", f"{rel}: a fix that changes the result went in with --fix alone"
    target = tmp_path / os.path.basename(rel)
    shutil.copy(os.path.join(FIXTURES, rel), target)
    run_cli("--fix", *(["--unsafe-fixes"] if unsafe else []), str(target))
    fixed = target.read_text()
    if want == "none":
        assert fixed == source, f"{rel}: a fix went in"
        return
    assert fixed != source, f"{rel}: no fix went in"
    good = _run(os.path.join(FIXTURES, rel.replace("_bad.", "_good.")))
    assert good.returncode == 0 and good.stdout, good.stderr[-500:]
    run = _run(str(target))
    computes = run.returncode == 0 and run.stdout == good.stdout
    if want == "same":
        assert computes, (f"{rel}: the fixed program (rc={run.returncode}: {run.final_exception()}) printed\n"
                          f"{run.stdout}\nwhere the corrected one printed\n{good.stdout}")
    else:
        assert not computes, f"{rel}: the fixed program computes what the corrected one does: say `same`"
