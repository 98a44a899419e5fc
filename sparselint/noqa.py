"""`--add-noqa`: suppress every current finding in place, to adopt sparselint on an existing codebase."""
from __future__ import annotations

import re
from collections import defaultdict

from . import source as src
from .fixer import parses

_EXISTING = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)", re.I)


def add(path: str, diagnostics) -> tuple[int, str | None]:
    """Add or extend `# noqa: ...` on each line with a finding; (directives added, error)."""
    by_line: dict[int, set[str]] = defaultdict(set)
    for d in diagnostics:
        if d.cell is None and not d.code.startswith("SPL90"):
            by_line[d.line].add(d.code)
    if not by_line:
        return 0, None
    try:
        with open(path, "rb") as fh:
            decoded = src.decode(fh.read())
    except (OSError, src.DecodeError) as exc:
        return 0, f"{path}: cannot add noqa: {exc}"
    parts = re.split(r"(\r\n|\r|\n)", decoded.text)
    lines, seps = parts[0::2], parts[1::2]
    added = 0
    for line, codes in by_line.items():
        lines[line - 1] = with_codes(lines[line - 1], codes)
        added += 1
    new = "".join(l + (seps[i] if i < len(seps) else "") for i, l in enumerate(lines))
    if not parses(new):
        return 0, f"{path}: cannot add noqa without breaking the code (a finding inside a multi-line string?)"
    try:
        src.write_atomic(path, src.encode(new, decoded.encoding))
    except OSError as exc:
        return 0, f"{path}: cannot write: {exc}"
    return added, None


def with_codes(text: str, codes) -> str:
    """One line with `# noqa: ...` added, or its existing list extended by `codes`."""
    m = _EXISTING.search(text)
    if m:
        old = [c.upper() for c in re.split(r"[\s,]+", m.group("codes")) if c]
        merged = old + sorted(set(codes) - set(old))
        return text[:m.start("codes")] + ", ".join(merged) + text[m.end("codes"):]
    return text.rstrip() + "  # noqa: " + ", ".join(sorted(codes))
