"""The rule interface and the registry that finds every rule module.

A rule is a class with a code, a kebab-case name, the real error it predicts and when it
fires, and `visit_<NodeType>(node, ctx)` hooks that the engine calls during its single
traversal. Rules ask the context for facts; they never walk the tree or track state.
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache
from typing import ClassVar

from .analysis.torchops.torchapi import SPARSE_SOURCE_TOKENS

HEADINGS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "References")


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    # The exception and the stable prefix of its message, as torch prints it.
    error: ClassVar[str]
    # When the error surfaces: "line", "backward", "step", "silent".
    when: ClassVar[str]
    hazards: ClassVar[tuple[str, ...]] = ()
    fix_title: ClassVar[str] = ""
    # A file can only produce this rule's findings if its code holds one of these tokens
    # (forms in `sparselint.tokens`: `name`, `prefix*`, `owner.attr`, `keyword=value`, and
    # `...()` for callee-only); by default, every source of a sparse fact.
    prefilter: ClassVar[tuple[str, ...]] = SPARSE_SOURCE_TOKENS
    # Tokens that count only in a module of a package checked for its entry points
    # (`api-entry-points`), where a public function's own layout test is the source: groups
    # of tokens, of which the file must hold one of each (a layout test and what fails).
    entry_prefilter: ClassVar[tuple[tuple[str, ...], ...]] = ()
    # Small examples beside the code: `valid` must stay silent, each `invalid` must be
    # flagged on the lines marked `# SPLnnn`.
    valid: ClassVar[tuple[str, ...]] = ()
    invalid: ClassVar[tuple[str, ...]] = ()
    torch_versions: ClassVar[tuple[str, ...]] = ("2.13.0", "2.9.1")

    @classmethod
    def doc(cls) -> str:
        import inspect
        module = importlib.import_module(cls.__module__)
        return inspect.cleandoc(module.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        """The first sentence under "What it does"."""
        sections = doc_sections(cls.doc())
        text = " ".join(sections.get("What it does", "").split())
        return text.split(". ")[0].rstrip(".")

    @classmethod
    def when_text(cls) -> str:
        return {
            "line": "at this line",
            "backward": "at `.backward()`",
            "step": "at `optimizer.step()`",
            "silent": "silently, with no error",
            "construct": "when the optimizer is built",
        }[cls.when]


def doc_sections(doc: str) -> dict[str, str]:
    """Split a rule doc on its `## Heading` lines."""
    sections: dict[str, str] = {}
    current = None
    for line in doc.splitlines():
        m = re.match(r"^##\s+(.*?)\s*$", line)
        if m:
            current = m.group(1)
            sections[current] = ""
        elif current is not None:
            sections[current] += line + "\n"
    return {k: v.strip("\n") for k, v in sections.items()}


_MODULE = re.compile(r"^spl(\d{3})_([a-z0-9_]+)$")


@lru_cache(maxsize=None)
def rule_index() -> tuple[tuple[str, str], ...]:
    """(code, name) of every rule, read from the module names (`spl001_values_on_uncoalesced`)
    without importing them: selecting rules and keying the cache need no LibCST."""
    from sparselint import rules as package

    found = []
    for info in pkgutil.iter_modules(package.__path__):
        m = _MODULE.match(info.name)
        if m:
            found.append((f"SPL{m.group(1)}", m.group(2).replace("_", "-")))
    return tuple(sorted(found))


@lru_cache(maxsize=None)
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class in `sparselint.rules`, found by import, sorted by code."""
    from sparselint import rules as package

    found = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__:
                if obj.code in found:
                    raise RuntimeError(f"rule code {obj.code} is defined twice")
                found[obj.code] = obj
    return tuple(found[c] for c in sorted(found))


def rule_by_code(code: str) -> type[Rule] | None:
    for rule in all_rules():
        if rule.code == code.upper() or rule.name == code:
            return rule
    return None
