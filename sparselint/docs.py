"""Documentation generated from the rule docs: the README's rule table and one page per
rule under docs/rules/.

`python -m sparselint.docs` rewrites both; a test fails when either is stale.
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
            f"- **Hazards:** {', '.join(rule.hazards)}\n"
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
    pages = {f"{r.code}.md": rule_page(r) for r in all_rules()}
    index = ["# Rules\n", "| code | name | summary |", "|---|---|---|"]
    index += [f"| [{r.code}]({r.code}.md) | {r.name} | {r.summary()} |" for r in all_rules()]
    pages["README.md"] = "\n".join(index) + "\n"
    return pages


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
    return 0


if __name__ == "__main__":
    sys.exit(main())
