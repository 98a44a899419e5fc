"""Documentation generated from the rule docs and the fixtures: the README's rule table, one
page per rule under docs/rules/, and the hazard catalog docs/hazards.md.

`python -m sparselint.docs` rewrites them; a test fails when one is stale.
"""
from __future__ import annotations

import re
import sys

from .rule import all_rules

START, END = "<!-- rules:start -->", "<!-- rules:end -->"


def fix_applicability(rule) -> str:
    """What the rule's fixes really are, read from the fixes it makes on its own examples and
    bad fixtures: "safe", "unsafe", or "safe or unsafe" when that depends on the code."""
    import glob
    import os
    from .config import Settings
    from .engine import check_text
    if not rule.fix_title:
        return ""
    sources = list(rule.invalid)
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", rule.code)
    for path in sorted(glob.glob(os.path.join(folder, "*_bad.py"))):
        with open(path, encoding="utf-8") as fh:
            sources.append(fh.read())
    kinds = {d.fix.applicability for text in sources for d in check_text(text, "example.py", Settings())[0]
             if d.code == rule.code and d.fix is not None}
    return " or ".join(k for k in ("safe", "unsafe") if k in kinds) or "unsafe"


def rule_table() -> str:
    rows = ["| code | name | what fails | when | fix |", "|---|---|---|---|---|"]
    for r in all_rules():
        fix = fix_applicability(r)
        error = r.error.replace("|", "\\|")
        rows.append(f"| {r.code} | {r.name} | `{error}` | {r.when} | {fix} |")
    return "\n".join(rows)


WHEN = {"line": "at the offending line", "backward": "at the next `.backward()`",
        "step": "at `optimizer.step()`", "silent": "never: the result is silently wrong",
        "construct": "when the optimizer is built"}


def rule_page(rule) -> str:
    doc = rule.doc().replace("## ", "### ")
    fix = "none"
    if rule.fix_title:
        fix = f"{rule.fix_title} (see Fix safety)"
    return (f"# {rule.code}: {rule.name}\n\n"
            f"- **Fails with:** `{rule.error}`\n"
            f"- **When:** {WHEN[rule.when]}\n"
            f"- **Verified with torch:** {', '.join(rule.torch_versions)}\n"
            f"- **Hazards:** {', '.join(rule.hazards)} (catalog: [docs/hazards.md](../hazards.md); "
            f"write-ups A*/B*: `fixtures/writeups/`)\n"
            f"- **Fix:** {fix}\n"
            f"- **Fixtures:** `fixtures/{rule.code}/`\n\n"
            f"{doc}\n" + op_table(rule))


def op_table(rule) -> str:
    table = getattr(rule, "op_table", None)
    if not table:
        return ""
    rows = ["", "### Ops", "", "| op | what torch raises | verified with torch |", "|---|---|---|"]
    rows += [f"| `{op}` | `{error}` | {', '.join(versions)} |" for op, (error, versions) in sorted(table.items())]
    return "\n".join(rows) + "\n"


def rule_pages() -> dict[str, str]:
    """File name -> content of every page under docs/rules/, index included."""
    from . import engine_codes
    pages = {f"{r.code}.md": rule_page(r) for r in all_rules()}
    pages.update({f"{c.code}.md": engine_codes.page(c) for c in engine_codes.CODES})
    index = ["# Rules\n", "| code | name | summary |", "|---|---|---|"]
    index += [f"| [{r.code}]({r.code}.md) | {r.name} | {r.summary()} |" for r in all_rules()]
    index += ["", "Codes the engine reports about a file rather than its code:", "",
              "| code | name | summary |", "|---|---|---|"]
    index += [f"| [{c.code}]({c.code}.md) | {c.name} | {c.summary} |" for c in engine_codes.CODES]
    pages["README.md"] = "\n".join(index) + "\n"
    return pages


HAZARD_TAG = re.compile(r"^# hazard: (\d\d) (.+)$", re.M)


def hazard_fixtures(fixtures: str) -> dict[str, dict]:
    """Hazard number -> its title, bad and good fixtures (paths relative to the repository) and
    the error the bad ones declare, from the `# hazard: NN title` line of each fixture."""
    import os
    from .testing import expectation, has_expectation
    out: dict[str, dict] = {}
    for base, dirs, files in os.walk(fixtures):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(base, name)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            rel = os.path.relpath(path, os.path.dirname(fixtures)).replace(os.sep, "/")
            for number, title in HAZARD_TAG.findall(text):
                entry = out.setdefault(number, {"title": title, "bad": [], "good": [], "outcome": ""})
                exp = expectation(text) if has_expectation(text) else None
                if exp is not None and exp.outcome == "ok":
                    entry["good"].append(rel)
                else:
                    entry["bad"].append(rel)
                    if exp is not None and not entry["outcome"]:
                        entry["outcome"] = (f"{exp.exception}: {exp.message}" if exp.outcome == "error"
                                            else "no error: silently wrong" if exp.outcome == "misbehaves"
                                            else "the process dies")
    return dict(sorted(out.items()))


def hazard_page(fixtures: str) -> str:
    rule_of = {n: r.code for r in all_rules() for n in r.hazards}
    rows = ["# The hazard catalog", "",
            "Every hazard sparselint knows, numbered as the rule docs cite them (`hazard 26`). Each is",
            "reproduced by a bad fixture that fails under torch as its header declares (or prints",
            "`MISBEHAVES` for a silent one) and a good fixture with the rewrite that runs clean; the",
            "fixture tests run both. Generated from the `# hazard: NN` line of the fixtures by",
            "`python -m sparselint.docs`.", "",
            "| hazard | rule | what torch does | bad | good |", "|---|---|---|---|---|"]
    for number, entry in hazard_fixtures(fixtures).items():
        outcome = entry["outcome"].replace("|", "\\|")
        bad = "<br>".join(f"`{p}`" for p in entry["bad"])
        good = "<br>".join(f"`{p}`" for p in entry["good"])
        rows.append(f"| {number} {entry['title']} | {rule_of.get(number, '')} | `{outcome}` | {bad} | {good} |")
    return "\n".join(rows) + "\n"


def coverage_page(root: str) -> str | None:
    """docs/coverage.md, rendered by the conformance matrix in the checkout's tests/matrix/
    (None outside a checkout: the matrix is a test asset, not part of the package)."""
    import importlib
    import os
    tests = os.path.join(root, "tests")
    if not os.path.isdir(os.path.join(tests, "matrix")):
        return None
    sys.path.insert(0, tests)
    try:
        render = importlib.import_module("matrix.render")
        return render.page(render.results())
    finally:
        sys.path.remove(tests)


def update_readme(text: str) -> str:
    block = f"{START}\n{rule_table()}\n{END}"
    return re.sub(re.escape(START) + r".*?" + re.escape(END), lambda _: block, text, flags=re.S)


def main(argv=None) -> int:
    import os
    root = (argv or sys.argv[1:] or ["."])[0]
    readme = os.path.join(root, "README.md")
    with open(readme, encoding="utf-8") as fh:
        text = fh.read()
    new = update_readme(text)
    if new != text:
        with open(readme, "w", encoding="utf-8") as fh:
            fh.write(new)
    folder = os.path.join(root, "docs", "rules")
    os.makedirs(folder, exist_ok=True)
    pages = rule_pages()
    for name in os.listdir(folder):
        if name.endswith(".md") and name not in pages:
            os.remove(os.path.join(folder, name))
    for name, content in pages.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
            fh.write(content)
    with open(os.path.join(root, "docs", "hazards.md"), "w", encoding="utf-8") as fh:
        fh.write(hazard_page(os.path.join(root, "fixtures")))
    coverage = coverage_page(root)
    if coverage is not None:
        with open(os.path.join(root, "docs", "coverage.md"), "w", encoding="utf-8") as fh:
            fh.write(coverage)
    return 0


if __name__ == "__main__":
    sys.exit(main())
