"""Documentation generated from the rule docs: the README's rule table.

`python -m sparselint.docs` rewrites the table in README.md; a test fails when it is stale.
"""
from __future__ import annotations

import re
import sys

from .rule import all_rules

START, END = "<!-- rules:start -->", "<!-- rules:end -->"


def rule_table() -> str:
    rows = ["| code | name | what fails | when | fix |", "|---|---|---|---|---|"]
    for r in all_rules():
        fix = "safe" if r.fix_title and "Unsafe" not in r.doc() else ("unsafe" if r.fix_title else "")
        error = r.error.replace("|", "\\|")
        rows.append(f"| {r.code} | {r.name} | `{error}` | {r.when} | {fix} |")
    return "\n".join(rows)


def update_readme(text: str) -> str:
    block = f"{START}\n{rule_table()}\n{END}"
    return re.sub(re.escape(START) + r".*?" + re.escape(END), lambda _: block, text, flags=re.S)


def main(argv=None) -> int:
    path = (argv or sys.argv[1:] or ["README.md"])[0]
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    new = update_readme(text)
    if new != text:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
