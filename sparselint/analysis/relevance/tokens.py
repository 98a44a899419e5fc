"""Where a rule's token counts: as code, at identifier boundaries, not as any substring.

Rules declare the text that any source of their facts contains, in four forms:

- `sparse_coo_tensor`: an identifier (a name, an attribute, an imported name);
- `to_sparse*`: an identifier that starts with this;
- `sparse.FloatTensor`: an attribute of an object so named;
- `sparse=True`: a keyword argument with this literal value;

and an identifier or attribute form ending in `()` counts only where it is called
(`x.to_sparse()`, not a table of function references). A form `!optim.PATTERN` says where an
identifier token does not count in code: followed by an attribute that `PATTERN` (a regular
expression) matches in full, as `optim` in `torch.optim.Optimizer`, a base class no call
builds, or in `optim.step()`, a method of an optimizer built elsewhere. Raw text search
ignores it.

`Tokens.search` is the cheap test on raw text (a regular expression, so it also matches in
comments and strings: a superset); `Tokens.matches_word` decides on the words read from the
syntax tree, where strings and comments are gone. So `supports_sparse=True`, `_to_sparse`
and a docstring that mentions `sparse_coo_tensor` are not tokens.
"""
from __future__ import annotations

import re
from collections import Counter
from functools import cached_property
from typing import Iterable

_IDENT = r"[A-Za-z0-9_]"


class Tokens:
    __slots__ = ("specs", "names", "prefixes", "pairs", "keywords", "called", "dead_ends", "__dict__")

    def __init__(self, specs: Iterable[str]):
        self.specs = tuple(sorted(set(specs)))
        names, prefixes, pairs, keywords, called, anywhere = set(), [], set(), set(), set(), set()
        dead: dict[str, list[str]] = {}
        for spec in self.specs:
            if spec.startswith("!"):
                head, _, pattern = spec[1:].partition(".")
                dead.setdefault(head, []).append(pattern)
                continue
            if spec.endswith("()"):
                spec = spec[:-2]
                called.add(spec.rstrip("*"))
            else:
                anywhere.add(spec.rstrip("*"))
            if "=" in spec:
                arg, _, value = spec.partition("=")
                keywords.add(f"{arg.strip()}={value.strip()}")
            elif spec.endswith("*"):
                prefixes.append(spec[:-1])
            elif "." in spec:
                pairs.add(spec)
            else:
                names.add(spec)
        self.names = frozenset(names)
        self.prefixes = tuple(prefixes)
        self.pairs = frozenset(pairs)
        self.keywords = frozenset(keywords)
        self.called = frozenset(called - anywhere)  # names, prefixes and pairs that count only as callees
        self.dead_ends = {head: re.compile("|".join(f"(?:{p})" for p in patterns)) for head, patterns in dead.items()}

    def __bool__(self) -> bool:
        return bool(self.specs)

    def __iter__(self):
        return iter(self.specs)

    def __eq__(self, other) -> bool:
        return isinstance(other, Tokens) and other.specs == self.specs

    def __hash__(self) -> int:
        return hash(self.specs)

    def __repr__(self) -> str:
        return f"Tokens({self.specs!r})"

    def __add__(self, other: "Tokens") -> "Tokens":
        return Tokens(self.specs + tuple(other))

    @cached_property
    def _checks(self) -> tuple:
        """(literal, what must follow it, whether a `.` may precede it) for each token: a
        literal is found by `str.find`, which is far faster than one alternation regex."""
        out = []
        # a callee-only token must be followed by `(` (or be imported, see `search`)
        for n in sorted(self.names):
            out.append((n, rf"(?!{_IDENT})\s*\(" if n in self.called else rf"(?!{_IDENT})", True))
        for p in self.prefixes:
            out.append((p, rf"{_IDENT}*\s*\(" if p in self.called else "", True))
        for pair in sorted(self.pairs):
            head, _, attr = pair.rpartition(".")
            tail = r"\s*\(" if pair in self.called else ""
            out.append((head, rf"\s*\.\s*{re.escape(attr)}(?!{_IDENT}){tail}", True))
        for kw in sorted(self.keywords):
            arg, _, value = kw.partition("=")
            out.append((arg, rf"\s*=\s*{re.escape(value)}(?!{_IDENT})", False))
        return tuple((lit, re.compile(re.escape(lit) + tail), dot, self._dead_end_check(lit)) for lit, tail, dot in out)

    def _dead_end_check(self, lit: str):
        rx = self.dead_ends.get(lit)
        return None if rx is None else re.compile(rf"{re.escape(lit)}\s*\.\s*(?:{rx.pattern})(?!{_IDENT})")

    @cached_property
    def _called_literals(self) -> tuple[frozenset, frozenset]:
        heads = {p.rpartition(".")[0] if "." in p else p for p in self.called}
        return frozenset(heads), frozenset(h.encode() for h in heads)

    @cached_property
    def _byte_checks(self) -> tuple:
        return tuple((lit.encode(), re.compile(rx.pattern.encode()), dot, dead and re.compile(dead.pattern.encode()))
                     for lit, rx, dot, dead in self._checks)

    @cached_property
    def _keys(self) -> tuple:
        """For str and for bytes: a piece of each check's literal (`sparse` of
        `sparse_coo_tensor`) that other literals hold too, if any."""
        lits = [lit for lit, _, _, _ in self._checks]
        pieces = {lit: {p for p in re.split(r"[_.]", lit) if len(p) >= 4} for lit in lits}
        shared = Counter(p for found in pieces.values() for p in found)
        keys = [max((p for p in pieces[lit] if shared[p] > 1), key=lambda p: (shared[p], p), default=None) for lit in lits]
        return tuple(keys), tuple(k.encode() if k is not None else None for k in keys)

    def search(self, text) -> bool:
        """Whether the raw text (str or bytes) may hold a token; comments and strings count.
        A callee-only token also counts shortly after `import` (`from torch import
        sparse_coo_tensor as make`, also in parentheses over lines). An identifier followed by
        an attribute of its `!` form is no token here either."""
        raw = isinstance(text, (bytes, bytearray))
        imported = b"import" if raw else "import"
        called = self._called_literals[1 if raw else 0]
        absent = set()
        for (lit, rx, dot, dead), key in zip(self._byte_checks if raw else self._checks, self._keys[1 if raw else 0]):
            # a text without `sparse` holds none of the many literals that contain it: one
            # scan for them all (the scans, not the matches, are what this costs)
            if key is not None:
                if key in absent:
                    continue
                if key not in text:
                    absent.add(key)
                    continue
            at = text.find(lit)
            while at != -1:
                before = text[at - 1:at]
                if raw:
                    before = before.decode("latin-1")
                if dead is not None and dead.match(text, at):
                    pass
                elif not (before and (before.isalnum() or before == "_" or (before == "." and not dot))):
                    if rx.match(text, at) or (lit in called and imported in text[max(0, at - 300):at]):
                        return True
                at = text.find(lit, at + 1)
        return False

    def dead_end(self, head: str, attr: str) -> bool:
        """Whether `head` followed by `.attr` is no token (a `!head.PATTERN` form)."""
        rx = self.dead_ends.get(head)
        return rx is not None and rx.fullmatch(attr) is not None

    def matches_word(self, word: str, callee: bool = True) -> bool:
        """Whether a word read from code is a token; `callee`: the word names what a call
        calls (`reduce` reads callee words apart from the others)."""
        if word in self.names or word in self.pairs:
            return callee or word not in self.called
        if word in self.keywords:
            return True
        if self.prefixes and word.startswith(self.prefixes):
            return callee or any(word.startswith(p) for p in self.prefixes if p not in self.called)
        return False
