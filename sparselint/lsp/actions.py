"""Code actions and hover on the findings of one analysis."""
from __future__ import annotations

from typing import Optional

from lsprotocol import types as lsp

from .. import notebook, suppression
from ..diagnostics import ENGINE_CODES, UNUSED_NOQA, Diagnostic
from ..noqa import with_codes
from ..source import NEWLINE, split_lines
from .convert import Placer, to_lsp, why
from .documents import Analysis

FIX_ALL_KIND = "source.fixAll.sparselint"
FIX_ALL_TITLE = "Fix all safe sparselint findings in this file"


def _before(a: lsp.Position, b: lsp.Position) -> bool:
    return (a.line, a.character) < (b.line, b.character)


def _touches(r: lsp.Range, q: lsp.Range) -> bool:
    return not (_before(r.end, q.start) or _before(q.end, r.start))


def findings_at(analysis: Analysis, placer: Placer, uri: str, query: lsp.Range):
    """(engine finding, its LSP diagnostic) for the findings in `uri` touching `query`."""
    out = []
    for d in analysis.findings:
        placed = to_lsp(d, placer)
        if placed is not None and placed[0] == uri and _touches(placed[1].range, query):
            out.append((d, placed[1]))
    return out


def _wanted(kind: str, only) -> bool:
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def code_actions(analysis: Analysis, placer: Placer, uri: str, query: lsp.Range,
                 only=None, lazy: bool = False) -> list[lsp.CodeAction]:
    """The actions for a range. With `lazy`, "fix all" comes without its edit, to be
    resolved when chosen: editors ask for actions at every cursor move, and computing it
    costs a check per fix round."""
    actions: list[lsp.CodeAction] = []
    here = findings_at(analysis, placer, uri, query)
    if _wanted(lsp.CodeActionKind.QuickFix, only):
        for d, diag in here:
            if d.fix is not None:
                action = _fix_action(d, diag, placer)
                if action is not None:
                    actions.append(action)
        for d, diag in here:
            # a finding in another module is suppressed there, not in this document
            if d.code not in ENGINE_CODES and d.code != UNUSED_NOQA[0] and d.path == analysis.source.name:
                action = _noqa_action(d, diag, analysis, placer)
                if action is not None:
                    actions.append(action)
    has_safe = any(d.fix is not None and d.fix.safe for d in analysis.findings)
    if has_safe and (_wanted(FIX_ALL_KIND, only) or _wanted(lsp.CodeActionKind.QuickFix, only)):
        if lazy:
            action = lsp.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL_KIND, data={"fixAll": analysis.source.key})
        else:
            action = fix_all_action(analysis, placer)
        if action is not None:
            if here and not only:
                action.diagnostics = [diag for d, diag in here if d.fix is not None and d.fix.safe] or None
            actions.append(action)
    return actions


def _fix_action(d: Diagnostic, diag: lsp.Diagnostic, placer: Placer) -> Optional[lsp.CodeAction]:
    changes: dict[str, list[lsp.TextEdit]] = {}
    for edit in d.fix.edits:
        placed = placer.edit(edit)
        if placed is None:
            return None
        changes.setdefault(placed[0], []).append(placed[1])
    label = f"Fix {d.code}: {d.fix.title}" if d.fix.safe else \
        f"Fix {d.code} (unsafe, may change behaviour): {d.fix.title}"
    return lsp.CodeAction(title=label, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag],
                          edit=lsp.WorkspaceEdit(changes=changes), is_preferred=d.fix.safe or None)


def _noqa_action(d: Diagnostic, diag: lsp.Diagnostic, analysis: Analysis,
                 placer: Placer) -> Optional[lsp.CodeAction]:
    source = analysis.source
    lines = split_lines(source.text)
    if not 1 <= d.line <= len(lines):
        return None
    new_line = with_codes(lines[d.line - 1], {d.code})
    # Only offer a comment that really suppresses the finding: on a line that ends inside
    # a multi-line string it would be text, not a comment.
    endings = NEWLINE.findall(source.text)
    candidate = "".join(l + (endings[i] if i < len(endings) else "")
                        for i, l in enumerate(lines[:d.line - 1] + [new_line] + lines[d.line:]))
    if not suppression.parse(candidate).suppresses(d.code, d.line):
        return None
    where = source.locate(d.line)
    if where is None:
        return None
    uri, there = where
    target = placer.lines(uri)
    start = lsp.Position(line=there - 1, character=0)
    end = lsp.Position(*target.to_client(there, len(target.lines[there - 1]) + 1))
    edit = lsp.TextEdit(range=lsp.Range(start=start, end=end), new_text=new_line)
    return lsp.CodeAction(title=f"Add `# noqa: {d.code}` to this line", kind=lsp.CodeActionKind.QuickFix,
                          diagnostics=[diag], edit=lsp.WorkspaceEdit(changes={uri: [edit]}))


def fix_all_action(analysis: Analysis, placer: Placer) -> Optional[lsp.CodeAction]:
    edit = fix_all_edit(analysis, placer)
    if edit is None:
        return None
    return lsp.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL_KIND, edit=edit)


def fix_all_edit(analysis: Analysis, placer: Placer) -> Optional[lsp.WorkspaceEdit]:
    fixed = analysis.fixed_text()
    if fixed is None:
        return None
    source = analysis.source
    if source.joined is None:
        return lsp.WorkspaceEdit(changes={source.key: [_replace(source.text, fixed, placer.lines(source.key))]})
    chunks = fixed.split(notebook.MARKER + "\n")[1:]
    if len(chunks) != len(source.joined.code_cells):
        return None
    changes = {}
    for index, chunk in zip(source.joined.code_cells, chunks):
        uri = source.cell_uris[index]
        old = source.targets[uri]
        if not old.endswith("\n") and chunk.endswith("\n"):
            chunk = chunk[:-1]
        if chunk != old:
            changes[uri] = [_replace(old, chunk, placer.lines(uri))]
    return lsp.WorkspaceEdit(changes=changes) if changes else None


def _replace(old: str, new: str, lines) -> lsp.TextEdit:
    """One edit covering only the part that changed, so the cursor and folds elsewhere stay."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    a, b = start, len(old) - end

    def pos(offset: int) -> lsp.Position:
        line = old.count("\n", 0, offset) + old.count("\r", 0, offset) - old.count("\r\n", 0, offset)
        last = max(old.rfind("\n", 0, offset), old.rfind("\r", 0, offset))
        l, c = lines.to_client(line + 1, offset - last)
        return lsp.Position(line=l, character=c)

    return lsp.TextEdit(range=lsp.Range(start=pos(a), end=pos(b)), new_text=new[a:len(new) - end])


def hover(analysis: Analysis, placer: Placer, uri: str, at: lsp.Position) -> Optional[lsp.Hover]:
    here = findings_at(analysis, placer, uri, lsp.Range(start=at, end=at))
    if not here:
        return None
    parts = []
    for d, diag in here:
        head = f"**{d.code}** `{d.name}`: {d.message}"
        body = why(d.code)
        parts.append(head + (f"\n\n### Why is this bad?\n\n{body}" if body else ""))
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)),
                     range=here[0][1].range)
