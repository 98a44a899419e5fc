"""The project index: the outline of the project's modules, classes and imports.

Files are read with Python's `ast` (the fast C parser), on demand and once per file per
process: where a name a file imports is defined, which classes are `nn.Module`s (through
their bases, in any module), which code of another module a check needs. Files are found on
disk next to the importer, so a run over one changed file (a pre-commit hook) still sees the
model defined elsewhere. Every file consulted is recorded, so a result cache can include it
in its key. What a model's instances are made of is not read here: the evaluator runs their
constructors (`analysis/modules.py`).
"""
from __future__ import annotations

import ast
from collections import deque
import io
import os
import re
from functools import lru_cache
import textwrap
import tokenize
import warnings
from dataclasses import dataclass, replace
from typing import Optional
from .installed import installed, installed_file, project_roots

from ..cst.names import CANONICAL, is_torch

# torch.nn classes whose parameters get sparse gradients when built with sparse=True.
SPARSE_CAPABLE = {"torch.nn.Embedding", "torch.nn.EmbeddingBag",
                  "torch.nn.modules.sparse.Embedding", "torch.nn.modules.sparse.EmbeddingBag"}
CONTAINERS = {"torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict"}
MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}
MAX_DEPTH = 8
# modules a chain of helpers is followed through for the code it reaches
_MAX_CHAIN = 3


@dataclass(frozen=True)
class ModuleClass:
    """A class of the project that is an `nn.Module`: where it is, and the torch layer it
    derives from (`nn.Embedding` for `class Table(nn.Embedding)`), if any."""

    qualname: str
    path: str
    name: str
    line: int
    torch_base: Optional[str] = None
    # the project files its outline read, for the result cache's key
    files: tuple[str, ...] = ()
    # every base is known: a class of the project, `nn.Module` or a torch layer (what an
    # `isinstance` test against a torch layer needs)
    bases_known: bool = False


@dataclass
class _Class:
    name: str
    path: str
    node: ast.ClassDef
    imports: dict[str, str]
    module: str


class ProjectIndex:
    """Class summaries for the files of one project, parsed lazily and cached."""

    def __init__(self):
        self._files: dict[tuple, Optional[tuple[ast.Module, dict[str, str], str]]] = {}
        self._trail: Optional[set[str]] = None
        self._texts: dict[str, str] = {}
        self._functions: dict[tuple, Optional[tuple[str, str]]] = {}
        # files an import was looked for in and not found: creating one changes the result
        self.missing: set[str] = set()
        self._import_files: dict[tuple, Optional[str]] = {}
        self._module_texts: dict[str, Optional[str]] = {}
        self._definitions: dict[tuple, list[str]] = {}
        self._module_classes: dict[tuple, Optional[ModuleClass]] = {}
        self._owners: dict[tuple, bool] = {}
        self._token_functions: dict[tuple, list] = {}
        self._reexports: dict[tuple, tuple] = {}  # (package __init__, tokens) -> what it re-exports that holds one
        self._twice: dict[str, frozenset] = {}  # module -> names it imports from two modules
        self._overlays: set[str] = set()
        self._outlines: dict[tuple, tuple] = {}
        self._reached: dict[tuple, tuple] = {}
        self._methods: dict[tuple, list] = {}
        self._inherited: dict[tuple, tuple] = {}
        self._tops: dict[ast.Module, dict[str, ast.AST]] = {}
        self._reads: dict[ast.Module, frozenset] = {}
        self._value_matters: dict[tuple, bool] = {}
        self._kinds: dict[tuple, Optional[str]] = {}
        self._imported: dict[tuple, tuple] = {}

    # -- editor buffers ----------------------------------------------------------------

    def set_text(self, path: str, text: Optional[str]) -> None:
        """Read `path` as `text` from now on (an unsaved editor buffer); None: from disk
        again. Every result derived from another version of it is dropped."""
        path = os.path.abspath(path)
        if text is None:
            self._texts.pop(path, None)
            self._overlays.discard(path)
        else:
            self._texts[path] = text
            self._overlays.add(path)
        keep = (path, hash(text)) if text is not None else None
        for key in [k for k in self._files if k[0] == path and len(k) == 2 and k != keep]:
            del self._files[key]
        self.forget_derived()

    def forget_derived(self) -> None:
        """Drop what was derived from file contents (a file changed on disk or in an editor),
        and the texts that checks handed in (a module read by a check of another file keeps
        the text it had then): only editor buffers stay."""
        for path in [p for p in self._texts if p not in self._overlays]:
            del self._texts[path]
        for memo in (self._functions, self._import_files, self._module_texts, self._definitions, self._outlines,
                     self._module_classes, self._owners, self._token_functions, self._reached, self._methods, self._inherited, self._tops,
                     self._reads, self._value_matters, self._kinds, self._imported, self._reexports, self._twice):
            memo.clear()

    def offer(self, path: str, text: str, tree: ast.Module) -> None:
        """The `ast` of a file being checked, built already: it is not parsed again."""
        path = os.path.abspath(path)
        self._texts[path] = text
        key = (path, hash(text))
        if key not in self._files:
            self._files[key] = (tree, _imports(tree, path), _module_name(path))

    def withdraw(self, path: str, text: str) -> None:
        """Forget the tree of a checked file once its check is done: a batch run would
        otherwise keep the tree of every file it checked. Another file importing it later
        reads it again."""
        path = os.path.abspath(path)
        if path not in self._overlays:  # an editor buffer stays: other files read it
            self._files.pop((path, hash(text)), None)

    # -- files and imports -------------------------------------------------------------

    def _load(self, path: str, text: Optional[str] = None):
        path = os.path.abspath(path)
        if text is None:
            text = self._texts.get(path)
        else:
            self._texts[path] = text  # the text being checked wins over what is on disk
        try:
            if text is not None:
                key = (path, hash(text))
            else:
                st = os.stat(path)
                key = (path, st.st_mtime_ns, st.st_size)
        except OSError:
            return None
        if key not in self._files:
            try:
                if text is None:
                    with open(path, "rb") as fh:
                        text = fh.read().decode("utf-8", "replace")
            except OSError:
                self._files[key] = None
                return None
            tree = parse_python(text)
            if tree is None:
                self._files[key] = None
                return None
            self._files[key] = (tree, _imports(tree, path), _module_name(path))
        return self._files[key]

    def _find_module(self, module: str, importer: str) -> Optional[str]:
        """The file of a project module, searched upwards from the importing file, else of
        an installed package."""
        rel = module.replace(".", os.sep)
        here = os.path.dirname(os.path.abspath(importer))
        self.missing.add(os.path.join(here, rel + ".py"))
        for _ in range(6):
            for cand in (os.path.join(here, rel + ".py"), os.path.join(here, rel, "__init__.py")):
                if os.path.isfile(cand):
                    return cand
            parent = os.path.dirname(here)
            if parent == here:
                break
            here = parent
        for root in project_roots():
            # the project's folders on `sys.path` (`PYTHONPATH=src`): found from any script
            for cand in (os.path.join(root, rel + ".py"), os.path.join(root, rel, "__init__.py")):
                if os.path.isfile(cand):
                    return cand
            self.missing.add(os.path.join(root, rel + ".py"))
        return installed_file(module)

    def _class(self, qualname: str, importer: str, importer_text: Optional[str] = None) -> Optional[_Class]:
        """A class by `<file>::<Name>` (same file) or by dotted project path."""
        if qualname.startswith("@"):
            # `from .models import MF` re-exported by a package __init__
            folder, _, name = qualname[1:].partition(":")
            for cand in (folder + ".py", os.path.join(folder, "__init__.py")):
                if os.path.isfile(cand):
                    return self._class(f"{cand}::{name}", importer)
            return None
        if "::" in qualname:
            path, name = qualname.split("::", 1)
            loaded = self._load(path, importer_text if os.path.abspath(path) == os.path.abspath(importer) else None)
        else:
            module, _, name = qualname.rpartition(".")
            path = self._find_module(module, importer) if module else None
            loaded = self._load(path) if path else None
        if loaded is None:
            return None
        tree, imports, modname = loaded
        node = self._top(tree).get(name)
        if isinstance(node, ast.ClassDef):
            if self._trail is not None:
                self._trail.add(os.path.abspath(path))
            return _Class(name, path, node, imports, modname)
        # a re-export: `from .model import Recommender` in a package __init__
        target = imports.get(name)
        if target and target != qualname and not is_torch(target):
            return self._class(target, path)
        return None

    def resolve_name(self, local: str, path: str, text: Optional[str] = None, attribute: str = "") -> Optional[str]:
        """The qualified name of a class name used in a file, if it is a project class; with
        `attribute`, of `local.attribute` where `local` is an imported project module."""
        loaded = self._load(path, text)
        if loaded is None:
            return None
        tree, imports, _ = loaded
        if not attribute and isinstance(self._top(tree).get(local), ast.ClassDef):
            return f"{os.path.abspath(path)}::{local}"
        target = imports.get(local)
        if not target or is_torch(target):
            return None
        if not attribute:
            return target
        if "." in attribute:
            return None
        if target.startswith("@"):
            folder, _, name = target[1:].partition(":")
            for cand in (os.path.join(folder, name + ".py"), os.path.join(folder, name, "__init__.py")):
                if os.path.isfile(cand):
                    return f"{cand}::{attribute}"
            return None
        return f"{target}.{attribute}"

    def may_own_parameters(self, name: str, path: str, text: Optional[str] = None) -> bool:
        """Whether a class of this file can be a model worth knowing inside its methods: it
        has bases, and it or its methods touch parameters or sparse-capable layers."""
        key = (os.path.abspath(path), hash(text) if text is not None else None, name)
        if key not in self._owners:
            loaded = self._load(path, text)
            found = False
            if loaded is not None:
                for node in loaded[0].body:
                    if isinstance(node, ast.ClassDef) and node.name == name:
                        found = class_may_own_parameters(node)
                        break
            self._owners[key] = found
        return self._owners[key]

    def resolve_function(self, local: str, path: str, text: Optional[str] = None,
                         attribute: str = "") -> Optional[tuple[str, str]]:
        """(file, name) of a function that a file imports from another module of the project:
        `from .utils import norm` then `norm(...)`, or `from . import utils` then
        `utils.norm(...)` (with `attribute`); re-exports through a package `__init__` too."""
        loaded = self._load(path, text)
        if loaded is None:
            return None
        return self._resolve(local, path, text, attribute, False)

    def resolve_binding(self, local: str, path: str, text: Optional[str] = None,
                        attribute: str = "") -> Optional[tuple[str, str]]:
        """(file, name) of what a file imports from another module of the project, as
        `resolve_function` finds it, but any module-level binding there: a function, a
        class or a value (`from registry import REGISTRY`)."""
        return self._resolve(local, path, text, attribute, True)

    def binding_kind(self, file: str, name: str) -> Optional[str]:
        """"function", "class" or "value": what a module binds to a top-level name, read from
        its `ast` (no LibCST parse)."""
        key = (file, name)
        if key not in self._kinds:
            loaded = self._load(file)
            node = self._top(loaded[0]).get(name) if loaded is not None else None
            self._kinds[key] = (None if loaded is None
                                else "function" if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                                else "class" if isinstance(node, ast.ClassDef) else "value")
        return self._kinds[key]

    def _top(self, tree: ast.Module) -> dict[str, ast.AST]:
        """The first top-level function or class of each name in a module."""
        found = self._tops.get(tree)
        if found is None:
            found = self._tops[tree] = {}
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    found.setdefault(node.name, node)
        return found

    def function_def(self, file: str, name: str, text: Optional[str] = None) -> Optional[ast.FunctionDef]:
        """The `ast` of a module's top-level function `name` (no LibCST parse)."""
        loaded = self._load(file, text)
        node = self._top(loaded[0]).get(name) if loaded is not None else None
        return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None

    def imported_files(self, file: str, text: Optional[str] = None) -> tuple[str, ...]:
        """The files of the project's own modules (not installed packages) that a module
        imports, or imports names from."""
        key = (os.path.abspath(file), hash(text) if text is not None else None)
        if key not in self._imported:
            loaded = self._load(file, text)
            found: dict[str, None] = {}
            for target in (loaded[1].values() if loaded is not None else ()):
                if is_torch(target):
                    continue
                if target.startswith("@"):
                    folder, _, name = target[1:].partition(":")
                    cands = (os.path.join(folder, name + ".py"), os.path.join(folder, name, "__init__.py"),
                             folder + ".py", os.path.join(folder, "__init__.py"))
                    module = next((c for c in cands if os.path.isfile(c)), None)
                else:
                    # `import a.b` or `from a.b import c`: c may be a module or a name of a.b
                    module = self._find_module(target, file)
                    if module is None and "." in target:
                        module = self._find_module(target.rpartition(".")[0], file)
                if module is not None and not installed(module):
                    found[os.path.abspath(module)] = None
            self._imported[key] = tuple(found)
        return self._imported[key]

    def makes_functions(self, file: str, name: str) -> bool:
        """A top-level function of a module returns a nested function or a lambda (a
        decorator factory), read from its `ast`."""
        loaded = self._load(file)
        for node in loaded[0].body if loaded is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                nested = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
                return any(isinstance(n, ast.Return) and (isinstance(n.value, ast.Lambda) or (
                    isinstance(n.value, ast.Name) and n.value.id in nested)) for n in nodes_under(node))
        return False

    def names_read(self, file: str, text: Optional[str] = None) -> frozenset:
        """Every name a module reads anywhere (its `ast`), imports aside."""
        loaded = self._load(file, text)
        if loaded is None:
            return frozenset()
        tree = loaded[0]
        if tree not in self._reads:
            self._reads[tree] = frozenset(n.id for n in nodes_under(tree) if type(n) is ast.Name and type(n.ctx) is ast.Load)
        return self._reads[tree]

    def _resolve(self, local: str, path: str, text: Optional[str], attribute: str, any_binding: bool):
        loaded = self._load(path, text)
        if loaded is None:
            return None
        key = (os.path.abspath(path), hash(text) if text is not None else None, local, attribute, any_binding)
        if key in self._functions:
            return self._functions[key]
        _, imports, _ = loaded
        target = imports.get(local)
        found = None
        if target and not (is_torch(target) or target.split(".")[0] in ("itertools", "functools")):
            if attribute:
                if "." not in attribute:
                    found = self._function_in(self._module_file(target, path), attribute, any_binding=any_binding)
            elif target.startswith("@"):
                folder, _, name = target[1:].partition(":")
                found = self._function_in(self._module_file("@" + os.path.dirname(folder) + ":" + os.path.basename(folder), path),
                                          name, any_binding=any_binding)
            else:
                module, _, name = target.rpartition(".")
                found = self._function_in(self._find_module(module, path) if module else None, name,
                                          any_binding=any_binding)
        self._functions[key] = found
        return found

    def _module_file(self, target: str, importer: str) -> Optional[str]:
        if target.startswith("@"):
            folder, _, name = target[1:].partition(":")
            for cand in (os.path.join(folder, name + ".py"), os.path.join(folder, name, "__init__.py")):
                if os.path.isfile(cand):
                    return cand
            self.missing.add(os.path.join(folder, name + ".py"))
            return None
        return self._find_module(target, importer)

    def _imported_twice(self, file: str, tree: ast.Module) -> frozenset:
        """The names a module binds by more than one `from ... import` (an optional fast
        implementation and its fallback): which one runs is not known statically. Read once
        per module."""
        memo = self._twice
        found = memo.get(file)
        if found is None:
            seen: set = set()
            twice: set = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    for a in node.names:
                        bound = a.asname or a.name
                        (twice if bound in seen else seen).add(bound)
            found = memo[file] = frozenset(twice)
        return found

    def _function_in(self, file: Optional[str], name: str, depth: int = 0,
                     any_binding: bool = False) -> Optional[tuple[str, str]]:
        if file is None or depth > 4:
            return None
        loaded = self._load(file)
        if loaded is None:
            return None
        tree, imports, _ = loaded
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return os.path.abspath(file), name
            if any_binding and name not in imports and (
                    (isinstance(node, ast.ClassDef) and node.name == name)
                    or (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets))
                    or (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name)):
                return os.path.abspath(file), name
        target = imports.get(name)  # re-exported by a package __init__
        if target and name in self._imported_twice(file, tree):
            return None  # (`try: from .fast import degree` / `except ImportError: from .fallback ...`)
        if target and target.startswith("@"):
            folder, _, inner = target[1:].partition(":")
            return self._function_in(folder + ".py" if os.path.isfile(folder + ".py") else
                                     os.path.join(folder, "__init__.py"), inner, depth + 1, any_binding)
        if target and "." in target and not is_torch(target):
            module, _, inner = target.rpartition(".")
            return self._function_in(self._find_module(module, file), inner, depth + 1, any_binding)
        return None

    def imported_code(self, text: str, path: str, tokens) -> tuple[list[str], list[str], set[str]]:
        """What a file imports from other modules of the project that can hold a hazard: the
        local names bound to such functions, classes or modules, their source texts, and the
        files consulted (found or looked for). Import lines are read by a cheap regex; a
        name re-exported by a package `__init__` is followed to its definition."""
        names: list[str] = []
        texts: list[str] = []
        files: set[str] = set()
        project_names: list[str] = []
        side_effects = False
        for file, original, local in self._imported_pairs(text, path, files):
            if original is None:  # the module itself: `import pkg.mod as m`, `from . import utils`
                found = self._functions_with(file, tokens) + self._reexported_with(file, tokens, files)
                for func, code in found:
                    names.append(f"{local}.{func}")
                    texts.append(code)
                if found and not re.search(rf"(?<![\w.]){re.escape(local)}\.", text):
                    # imported only for what its body does (decorators filling a registry
                    # of another module): what this file reads from the project may hold
                    # what it made
                    side_effects = True
                continue
            project_names.append(local)
            # a name a package's `__init__` re-exports is read where it is defined
            file, original = self._definition_site(file, original, files)
            code = self._code_with_helpers(file, original, tokens, files)
            if not code and _subclassed(text, local):
                # a base class whose methods a subclass here inherits: `__init__`, those
                # this file calls, and those these call on `self` in turn, run here
                code = _methods_reached(self._methods_of(file, original), (text,))
            elif not code:
                # a model class: building one runs its `__init__`, calling one its
                # `forward`, here (also those it inherits from a base of the project)
                code = [c for name, c in self._inherited_methods(file, original, files) if name in ("__init__", "forward")]
            if not any(_holds(tokens, c) for c in code):
                # the methods and properties of a class that this file names (`g.adjacency`,
                # `trainer.fit`), and those they or `__init__` call on `self` in turn, also
                # through its bases' constructors (one run by `super().__init__()` that calls
                # an overridden `self.configure_optimizers()`); the bases' own code is not
                # counted, or every file using a subclass of a large base would matter
                methods = self._methods_of(file, original)
                if methods:
                    own = {c for _, c in methods}
                    reached = _methods_reached(methods + self._base_methods(file, original, files), (text, *code))
                    code = list(code) + [c for c in reached if c in own and c not in code]
            if code and any(_holds(tokens, c) for c in code):
                names.append(local)
                texts.extend(code)
        if side_effects:
            names.extend(n for n in project_names if n not in names)
        return names, texts, files

    def imported_definitions(self, text: str, path: str) -> tuple[tuple[str, ...], set[str]]:
        """The source of the functions a file imports by name from other modules of the
        project, whatever they hold, and the files consulted."""
        out: list[str] = []
        files: set[str] = set()
        for file, original, _ in self._imported_pairs(text, path, files):
            if original is not None:
                out.extend(self._definition_text(file, original, files))
        return tuple(out), files

    def _imported_pairs(self, text: str, path: str, files: set[str]):
        """(file, imported name or None for the module itself, local name) of each import of
        a text from a module of the project, read by a cheap regex; the files found are added
        to `files`."""
        for module, pairs in _import_lines(text):
            file = self._import_file(module, path)
            if file is None:
                continue
            files.add(file)
            for original, local in pairs:
                yield file, original, local

    def _reached_code(self, file: str, name: str, code: list[str], tokens, files: set[str], depth: int = 0) -> list[str]:
        """The source of the functions that the function `name` (of the module `file`, whose
        source is `code`) calls, in its module or through the names its module imports from
        other modules of the project, when they hold a token, followed through helpers that
        do not, up to a few calls deep."""
        key = (file, name, tokens, depth)
        found = self._reached.get(key)
        if found is None:
            self._reached[key] = ([], set())  # a cycle of helpers ends here
            found = self._reached[key] = self._reach(file, code, tokens, depth)
        files.update(found[1])
        return found[0]

    def _reach(self, file: str, code: list[str], tokens, depth: int) -> tuple[list[str], set[str]]:
        out: list[str] = []
        seen: set[str] = set()
        if depth >= _MAX_CHAIN:
            return out, seen
        called = {m.group(1) for c in code for m in _CALLED.finditer(c)}
        body = self._text(file) or ""
        defs, imports = self._outline(file, body)
        for local in sorted(called & set(defs)) if depth == 0 else ():
            # a helper beside the function imported (`build_optimizer(cfg.optimizer, ...)`);
            # the token must be in its code: torch's tracing helpers say "sparse" in their
            # comments. Only there: further down, the helpers of helpers of torch's passes
            # made its compiler's entry module matter
            found = self._definition_text(file, local, seen)
            if any(_holds(tokens, c) for c in found):
                out.extend(found)
            elif found:
                out.extend(self._reached_code(file, local, found, tokens, seen, depth + 1))
        for module, pairs in imports:
            for original, local in pairs:
                if original is None or local not in called:
                    continue
                sub = self._import_file(module, file)
                if sub is None:
                    continue
                seen.add(sub)
                found = self._definition_text(sub, original, seen)
                if any(_holds(tokens, c) for c in found):
                    out.extend(found)
                elif found:
                    out.extend(self._reached_code(sub, original, found, tokens, seen, depth + 1))
        # a module constant the code reads (`OPTIMIZERS[name]`, a registry of optimizer
        # classes): the statement binding it, when that holds a token
        read = {m.group(0) for c in code for m in _CONSTANT.finditer(c)}
        for name in sorted(read & set(_value_starts(body)) - set(defs)):
            found = self._definition_text(file, name, seen)
            if any(_holds(tokens, c) for c in found):
                out.extend(c for c in found if c not in out)
        return out, seen

    def _methods_of(self, file: str, name: str) -> list[tuple[str, str]]:
        """(name, source) of the methods of the top-level class `name` of a module, found by
        a regex."""
        key = (file, name)
        if key not in self._methods:
            self._methods[key] = self._find_methods(self._text(file) or "", name)
        return self._methods[key]

    def _inherited_methods(self, file: str, name: str, files: set[str], depth: int = 0) -> list[tuple[str, str]]:
        """(name, source) of the methods of the class `name` of a module and of those it
        inherits from base classes of the project that it does not override (`class
        DistMult(KGEModel)` runs `KGEModel.__init__`); the files of the bases are added to
        `files`."""
        key = (file, name, depth)
        found = self._inherited.get(key)
        if found is None:
            self._inherited[key] = ([], set())  # (a cycle of bases ends here)
            own = self._methods_of(file, name)
            out, seen, consulted = list(own), {n for n, _ in own}, set()
            for base_file, base in (self._project_bases(file, name) if depth < _MAX_CHAIN else ()):
                consulted.add(base_file)
                for method, code in self._inherited_methods(base_file, base, consulted, depth + 1):
                    if method not in seen:
                        seen.add(method)
                        out.append((method, code))
            found = self._inherited[key] = (out, consulted)
        files.update(found[1])
        return found[0]

    def _base_methods(self, file: str, name: str, files: set[str], depth: int = 0) -> list[tuple[str, str]]:
        """(name, source) of the constructors of the project bases of a class, overridden
        ones included (`super().__init__()` runs them); the bases' files are added to
        `files`."""
        out = []
        for base_file, base in (self._project_bases(file, name) if depth < _MAX_CHAIN else ()):
            files.add(base_file)
            out.extend(m for m in self._methods_of(base_file, base) if m[0] == "__init__" and m not in out)
            out.extend(m for m in self._base_methods(base_file, base, files, depth + 1) if m not in out)
        return out

    def _project_bases(self, file: str, name: str) -> list[tuple[str, str]]:
        """(file, class name) of the bases of the top-level class `name` that are classes of
        the project: defined in the same module, or imported by name from another one."""
        body = self._text(file) or ""
        start = _class_starts(body).get(name)
        if start is None:
            return []
        header = _CLASS_START.match(body, start[0])
        rest = header.group(3) if header is not None else ""
        if not rest.lstrip().startswith("("):
            return []
        words = [w.strip() for w in rest.lstrip()[1:].split(")")[0].split(",")]
        local_classes = _class_starts(body)
        _, imports = self._outline(file, body)
        found: list[tuple[str, str]] = []
        for word in words:
            if not word.isidentifier() or word == name:
                continue  # `nn.Module`, `metaclass=...`
            if word in local_classes:
                found.append((file, word))
                continue
            for module, pairs in imports:
                match = next((o for o, l in pairs if l == word), _NONE)
                if match is not _NONE and match is not None:
                    sub = self._import_file(module, file)
                    if sub is not None:
                        found.append((sub, match))
                    break
        return found

    @staticmethod
    def _find_methods(body: str, name: str) -> list[tuple[str, str]]:
        where = _class_starts(body).get(name)
        if where is None:
            return []
        start, end = where
        nxt = _TOP_LEVEL.search(body, end)
        text = body[start:nxt.start() if nxt else len(body)]
        starts = list(_line_matches(_METHOD, _DEF_WORD, text))
        return [(d.group(1), text[d.start():starts[k + 1].start() if k + 1 < len(starts) else len(text)])
                for k, d in enumerate(starts)]

    def _functions_with(self, file: str, tokens) -> list[tuple[str, str]]:
        """(name, source) of the top-level functions of a module that hold a token."""
        key = (file, tokens)
        if key not in self._token_functions:
            body = self._text(file) or ""
            found = []
            if tokens.search(body):
                for m in _line_matches(_DEF, _DEF_WORD, body):
                    nxt = _TOP_LEVEL.search(body, m.end())
                    code = body[m.start():nxt.start() if nxt else len(body)]
                    if _holds(tokens, code):
                        found.append((m.group(1), code))
            self._token_functions[key] = found
        return self._token_functions[key]

    def _code_with_helpers(self, file: str, name: str, tokens, files: set[str]) -> list[str]:
        """The source of the top-level `name` of a module; when it holds no token, with the
        code of the helpers it calls that do: a function that passes what it is given on to
        one of another module (`run(model)` -> `use(model)` -> the hazard) counts as that one."""
        code = self._definition_text(file, name, files)
        if code and not any(_holds(tokens, c) for c in code):
            code = code + self._reached_code(file, name, code, tokens, files)
        return code

    def _reexported_with(self, file: str, tokens, files: set[str]) -> list[tuple[str, str]]:
        """(name, source) of the functions a package's `__init__` re-exports from its own
        modules (`from .convert import from_edge_index`) whose code holds a token, or whose
        helpers' code does: `edgekit.from_edge_index(...)` runs them."""
        if os.path.basename(file) != "__init__.py":
            return []
        memo = self._reexports
        key = (file, tokens)
        if key not in memo:
            consulted: set = set()
            memo[key] = (self._reexported_now(file, tokens, consulted), consulted)
        found, consulted = memo[key]
        files.update(consulted)
        return found

    def _reexported_now(self, file: str, tokens, files: set[str]) -> list[tuple[str, str]]:
        body = self._text(file) or ""
        _, imports = self._outline(file, body)
        out = []
        for module, pairs in imports:
            if not module.startswith("."):
                continue
            for original, local in pairs:
                if original is None:
                    continue
                there, name = self._definition_site(file, local, files)
                if there == file:
                    continue
                code = self._code_with_helpers(there, name, tokens, files) or [
                    # a model class: `pkg.Model(...)` runs its `__init__`, calling one its `forward`
                    c for n, c in self._inherited_methods(there, name, files) if n in ("__init__", "forward")]
                if any(_holds(tokens, c) for c in code):
                    out.extend((local, c) for c in code)
        return out

    def _definition_site(self, file: str, name: str, files: set[str], depth: int = 0) -> tuple[str, str]:
        """(file, name) where the top-level name `name` of a module is defined, following
        re-exports (`from .trainer import fit` in a package's `__init__`); the module itself
        when it defines the name or does not import it."""
        body = self._text(file) or ""
        defs, imports = self._outline(file, body)
        if name in defs or depth > 4:
            return file, name
        if sum(1 for module, pairs in imports for _, l in pairs
               if l == name and self._import_file(module, file) not in (None, file)) > 1:
            # imported from two modules (`try: from .fast import degree` / `except
            # ImportError: from .fallback import degree`): which one runs is not known
            return file, name
        for module, pairs in imports:
            match = next((o for o, l in pairs if l == name), _NONE)
            if match is not _NONE and match is not None:
                sub = self._import_file(module, file)
                # (an import of the module itself is a docstring's example, read by the regex)
                if sub is not None and sub != file:
                    files.add(sub)
                    return self._definition_site(sub, match, files, depth + 1)
        return file, name

    def _definition_text(self, file: str, name: str, files: set[str], depth: int = 0) -> list[str]:
        """The source of the top-level function `name` of a module, found by a regex (no
        parse), following re-exports."""
        key = (file, name)
        if key in self._definitions:
            return self._definitions[key]
        self._definitions[key] = []  # a cycle of re-exports ends here
        body = self._text(file) or ""
        out: list[str] = []
        # functions and record classes only: an imported model class is read by
        # `instantiate`, and a class that mentions a token in one method would keep every
        # line that names it
        defs, imports = self._outline(file, body)
        start = defs.get(name)
        if start is not None:
            nxt = _TOP_LEVEL.search(body, start + 1)
            out = [body[start:nxt.start() if nxt else len(body)]]
            header = _CLASS_START.match(body, _line_start_of_decorators(body, start)) if body.startswith("class", start) else None
            if header is not None and _record_header(header):
                out = self._record_defaults(file, out[0], files, depth)
            elif header is not None:
                out = self._init_code(file, name, files, depth)
        elif depth <= 4:
            for module, pairs in imports:
                match = next((o for o, l in pairs if l == name), _NONE)
                if match is not _NONE:
                    sub = self._import_file(module, file)
                    if sub == file:
                        continue  # a docstring's example, read by the regex
                    if sub is not None:
                        files.add(sub)
                        out = self._definition_text(sub, match or name, files, depth + 1)
                    break
        if start is None and not out:
            # a module-level value (`make_optimizer = functools.partial(torch.optim.Adam, ...)`):
            # the statement that binds it
            bound = _value_starts(body).get(name)
            if bound is not None:
                nxt = _TOP_LEVEL.search(body, bound)
                out = [body[_line_start(body, bound):nxt.start() if nxt else len(body)]]
        self._definitions[key] = out
        return out

    def value_may_matter(self, file: str, name: str, tokens) -> bool:
        """Whether a module-level value of another module can hold a fact worth its module's
        parse and run: its statement holds a token or calls a function of its module that
        does, or it is written out (a flag, a config dict, a registry still empty), or it
        is something this regex reading cannot tell."""
        key = (file, name, tokens)
        found = self._value_matters.get(key)
        if found is None:
            found = self._value_matters[key] = self._value_matters_now(file, name, tokens)
        return found

    def _value_matters_now(self, file: str, name: str, tokens, depth: int = 0) -> bool:
        from ..torchops.torchapi import LITERAL_SHAPE_SOURCE
        code = self._definition_text(file, name, set())
        if len(code) != 1 or any(tokens.search(c) for c in code):
            return True
        if LITERAL_SHAPE_SOURCE.search(code[0]):
            return True  # a tensor whose data is written out (`torch.tensor([[0, 1], [1, 2]])`)
        try:
            statement = ast.parse(code[0]).body[0]
        except (SyntaxError, IndexError, ValueError, RecursionError):
            return True
        value = getattr(statement, "value", None)
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or value is None:
            return True
        if isinstance(value, (ast.Name, ast.Attribute)):
            return True  # another name of the project: not read here
        try:
            ast.literal_eval(value)
            return True
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
        called = set(_called_names(value))
        body = self._text(file) or ""
        for n in {n.id for n in ast.walk(value) if type(n) is ast.Name}:
            kind = self.binding_kind(file, n)
            if kind == "class" or (kind == "function" and n not in called):
                return True  # a class of the project, or a function held as a value (`{"gcn": GCN}`)
            if kind == "function" and any(tokens.search(c) for c in self._definition_text(file, n, set())):
                return True
            if (kind == "value" and n != name and depth < 3 and n in _value_starts(body)
                    and self._value_matters_now(file, n, tokens, depth + 1)):
                return True
        return False

    def _init_code(self, file: str, name: str, files: set[str], depth: int) -> list[str]:
        """What of a plain class runs where an instance is made: its `__init__`, and the
        module's functions and classes that it names (`self.adj = make_adj()`)."""
        found = [c for n, c in self._methods_of(file, name) if n == "__init__"]
        if not found:
            return []
        # up to the next method, whose decorators the text may end with
        lines = textwrap.dedent(found[0]).rstrip().splitlines()
        while lines and lines[-1].lstrip().startswith("@"):
            lines.pop()
        try:
            tree = ast.parse("\n".join(lines))
        except SyntaxError:
            return found
        # its code without comments or docstrings: only what runs counts
        out = [ast.unparse(tree)]
        if depth <= 4:
            for called in _called_names(tree):
                out.extend(self._definition_text(file, called, files, depth + 1))
        return out

    def _record_defaults(self, file: str, code: str, files: set[str], depth: int) -> list[str]:
        """What of a record class runs where an instance is made: the source of its field
        defaults, and of the module's functions they name (`default_factory=make_adj`);
        not its docstring or annotations."""
        try:
            tree = ast.parse(code)
        except SyntaxError:
            return [code]
        out: list[str] = []
        lines: Optional[list[str]] = None
        for node in tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else ():
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if value is None:
                continue
            if lines is None:
                lines = _source_lines(code)
            out.append(_segment(lines, value))
            if depth <= 4:
                for called in _called_names(value):
                    out.extend(self._definition_text(file, called, files, depth + 1))
        return out

    def _outline(self, file: str, body: str) -> tuple[dict[str, int], list]:
        """Where each top-level function and record class of a module starts, and its import
        lines: read once per module (a package `__init__` is consulted for every name it
        re-exports)."""
        key = (file, hash(body))
        found = self._outlines.get(key)
        if found is None:
            defs: dict[str, int] = {}
            for m in _line_matches(_DEF_START, _DEF_WORD, body):
                defs.setdefault(m.group(1), m.start())
            for m in _line_matches(_CLASS_START, _CLASS_WORD, body, _line_start_of_decorators):
                # a dataclass or NamedTuple (its field defaults run where an instance is
                # made), or a plain class (its `__init__` does)
                if _record_header(m) or _PLAIN_HEADER.match(m.group(3)):
                    defs.setdefault(m.group(2), m.start() + len(m.group(1)))
            found = self._outlines[key] = (defs, list(_import_lines(body)))
        return found

    def _import_file(self, module: str, importer: str) -> Optional[str]:
        if module.split(".")[0] in _NOT_PROJECT:
            return None
        key = (os.path.dirname(os.path.abspath(importer)), module)
        if key not in self._import_files:
            if module.startswith("."):
                level = len(module) - len(module.lstrip("."))
                folder = os.path.dirname(os.path.abspath(importer))
                for _ in range(level - 1):
                    folder = os.path.dirname(folder)
                rest = module[level:]
                base = os.path.join(folder, *rest.split(".")) if rest else folder
                found = next((c for c in (base + ".py", os.path.join(base, "__init__.py")) if os.path.isfile(c)), None)
                if found is None and rest:
                    self.missing.add(base + ".py")
            else:
                found = self._find_module(module, importer)
            self._import_files[key] = os.path.abspath(found) if found else None
        return self._import_files[key]

    def _text(self, file: str) -> Optional[str]:
        """A module's text: an editor's unsaved buffer if one was given, else the disk's."""
        if file in self._texts:
            return self._texts[file]
        if file not in self._module_texts:
            try:
                with open(file, "rb") as fh:
                    self._module_texts[file] = fh.read().decode("utf-8", "replace")
            except OSError:
                self._module_texts[file] = None
        return self._module_texts[file]

    # -- instances ---------------------------------------------------------------------

    def module_class(self, qualname: str, importer: str, text: Optional[str] = None) -> Optional[ModuleClass]:
        """The outline of a class that is an `nn.Module` (through its bases, in any module
        of the project); None for any other class. What its instances are made of is the
        evaluator's business: it runs the constructor."""
        try:
            key = (qualname, os.path.abspath(importer), hash(text) if text is not None else None)
        except TypeError:
            return None
        if key not in self._module_classes:
            self._trail = set()
            try:
                found = self._module_class(qualname, importer, text, 0)
            finally:
                trail, self._trail = self._trail, None
            if found is not None:
                found = replace(found, files=tuple(sorted(f for f in trail if f != os.path.abspath(importer))))
            self._module_classes[key] = found
        return self._module_classes[key]

    def _module_class(self, qualname: str, importer: str, text: Optional[str], depth: int) -> Optional[ModuleClass]:
        if depth > MAX_DEPTH:
            return None
        cls = self._class(qualname, importer, text)
        if cls is None:
            return None
        torch_base, is_module, known = None, False, not cls.node.keywords
        for base in cls.node.bases:
            bq = _qualify(base, cls.imports, cls.path)
            if bq is None:
                known = False
                continue
            if bq in MODULE_BASES:
                is_module = True
            elif bq in SPARSE_CAPABLE or (bq.startswith("torch.nn.") and bq.count(".") == 2
                                          and bq.split(".")[-1][:1].isupper() and bq not in CONTAINERS):
                is_module = True
                torch_base = torch_base or CANONICAL.get(bq, bq)
            elif not is_torch(bq):
                sub = self._module_class(bq, cls.path, None, depth + 1)
                if sub is not None:
                    is_module = True
                    torch_base = torch_base or sub.torch_base
                    known = known and sub.bases_known
                else:
                    known = known and bq == "object"
            else:
                known = False
        if not is_module:
            return None
        return ModuleClass(qualname, os.path.abspath(cls.path), cls.name, cls.node.lineno, torch_base,
                           bases_known=known)


# Top-level packages that are never part of the project being checked.
_NOT_PROJECT = frozenset({"torch", "numpy", "typing", "os", "sys", "collections", "functools", "itertools",
                          "dataclasses", "math", "re", "abc", "enum", "warnings", "logging", "json", "copy",
                          "contextlib", "inspect", "__future__", "pathlib", "time", "random"})
_IMPORT_WORD = re.compile(r"import[ \t]")
_DEF_WORD = re.compile(r"def[ \t]")
_CLASS_WORD = re.compile(r"class[ \t]")
_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\(?([\w ,\t]+)|import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?))", re.M)


_NONE = object()
# Names that make a class worth instantiating for its methods: parameter access and the
# layers that can own sparse gradients.
_OWNER_HINTS = frozenset({"parameters", "named_parameters", "Embedding", "EmbeddingBag", "Parameter", "embedding",
                          "embedding_bag"})
_OWN_PARAMETERS = frozenset({"parameters", "named_parameters"})
# The start of the next top-level statement: a line that begins with code.
_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
_TOP_LEVEL = re.compile(r"^(?=[^\s#)\]}'\"])", re.M)


# a name called in source text: `use(` of `use(x)`
_CALLED = re.compile(r"(?<![\w.])(\w+)\s*\(")
_CONSTANT = re.compile(r"(?<![\w.])_?[A-Z][A-Z0-9_]{2,}(?!\w)")  # `OPTIMIZERS`, a module's own `_OPTIMIZERS`
_METHOD = re.compile(r"^[ \t]+(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
_DEF_START = re.compile(r"^(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
_CLASS_START = re.compile(r"^((?:@[^\n]*\n)*)class[ \t]+(\w+)([^\n]*)", re.M)
# the rest of a class line that names no base: `class Trainer:`, `class Trainer(object):`
_PLAIN_HEADER = re.compile(r"[ \t]*(?:\([ \t]*(?:object)?[ \t]*\))?[ \t]*:")


def _called_names(tree: ast.AST) -> list[str]:
    """The names code calls, directly or as a `default_factory`: what runs when it does."""
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            out.append(n.func.id)
        elif isinstance(n, ast.keyword) and n.arg == "default_factory" and isinstance(n.value, ast.Name):
            out.append(n.value.id)
    return out


def _record_header(m: re.Match) -> bool:
    return "dataclass" in m.group(1) or "NamedTuple" in m.group(3)


def _line_start_of_decorators(body: str, start: int) -> int:
    """Where the decorator lines above the `class` line at `start` begin."""
    at = start
    while at > 0:
        previous = body.rfind("\n", 0, at - 1) + 1
        if not body.startswith("@", previous):
            break
        at = previous
    return at


# where `ast` ends a line: `\r\n`, `\r` or `\n` (not the other breaks `str.splitlines` knows)
_LINE_END = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


def _source_lines(text: str) -> list[str]:
    """The lines of a source text as `ast` counts them, with their ends."""
    lines = _LINE_END.split(text)
    if lines and not lines[-1]:
        lines.pop()
    return lines


def _segment(lines: list[str], node: ast.AST) -> str:
    """`ast.get_source_segment(text, node) or ""` with the text's lines split once:
    `ast` splits the whole text again, character by character, for every segment."""
    end_lineno, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
    if end_lineno is None or end_col is None:
        return ""
    first, last = node.lineno - 1, end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset:end_col].decode()
    head = lines[first].encode()[node.col_offset:].decode()
    tail = lines[last].encode()[:end_col].decode()
    return "".join([head, *lines[first + 1:last], tail])


def parse_python(text: str) -> Optional[ast.Module]:
    """The `ast` of a source text, None when it does not parse; SyntaxWarnings are not ours
    to report."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
# fields that hold only contexts, operators or strings
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "kind"})


def nodes_under(root: ast.AST):
    """The nodes of a tree, in no set order: those of `ast.walk` but the contexts and
    operators, without its per-field generators (a scan of every file's tree that asks
    whether some node is there, or what names it reads)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        push_children(node, stack)


def push_children(node: ast.AST, stack: list) -> None:
    """`ast.iter_child_nodes` without its generator and per-field checks, onto a stack."""
    kind = type(node)
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        names = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in _LEAF_FIELDS)
    for name in names:
        value = getattr(node, name, None)
        if type(value) is list:
            stack.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            stack.append(value)


def class_may_own_parameters(node: ast.ClassDef) -> bool:
    """A class that can be a model worth knowing inside its methods: it has bases, and it
    or its methods build parameters or sparse-capable layers, or read its own parameters.
    The parameters of another object (`model.parameters()` in a test case,
    `signature(f).parameters`) and a layer class named but not built (`isinstance(v,
    nn.Parameter)`, `ty is nn.Parameter`) say nothing of the class's own."""
    if not node.bases:
        return False
    if any(_owner_hint(n) for b in node.bases for n in nodes_under(b)):
        return True  # `class Table(nn.Embedding)`
    stack: list = list(node.body)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Call) and _built_by(n.func):
            return True  # `nn.Embedding(...)`, `nn.Embedding.from_pretrained(...)`, `self.parameters()`
        if isinstance(n, ast.Attribute) and n.attr in _OWN_PARAMETERS and _owner_hint(n):
            return True  # `params=self.parameters` handed on
        push_children(n, stack)
    return False


def _built_by(func: ast.AST) -> bool:
    while isinstance(func, ast.Attribute):
        if _owner_hint(func):
            return True
        func = func.value
    return _owner_hint(func)


def _owner_hint(n: ast.AST) -> bool:
    if isinstance(n, ast.Name):
        return n.id in _OWNER_HINTS
    if not isinstance(n, ast.Attribute) or n.attr not in _OWNER_HINTS:
        return False
    if n.attr not in _OWN_PARAMETERS:
        return True
    root = n.value
    while isinstance(root, ast.Attribute):
        root = root.value
    return (isinstance(root, ast.Name) and root.id in ("self", "cls")
            or isinstance(root, ast.Call) and isinstance(root.func, ast.Name) and root.func.id == "super")


@lru_cache(maxsize=8192)
def _holds(tokens, code: str) -> bool:
    """Whether another module's code holds a token as code: a comment naming
    `torch/optim/lr_scheduler.py` made every importer of a tracing helper of torch's
    compiler matter."""
    # (cached: the same imported function is asked about once per file importing it)
    return bool(tokens.search(code) and tokens.search(_code_of(code)))


@lru_cache(maxsize=512)
def _code_of(text: str) -> str:
    """The text with its comments and strings blanked (lines and columns kept)."""
    lines = text.splitlines(keepends=True)
    out = list(lines)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type not in (tokenize.COMMENT, tokenize.STRING):
                continue
            (r0, c0), (r1, c1) = tok.start, tok.end
            for r in range(r0, r1 + 1):
                line = out[r - 1]
                a = c0 if r == r0 else 0
                b = c1 if r == r1 else len(line.rstrip("\r\n"))
                out[r - 1] = line[:a] + " " * (b - a) + line[b:]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return text
    return "".join(out)


# methods that run without being named: making an instance, calling one (`noise(params)`)
_RUN_UNNAMED = frozenset({"__init__", "__call__"})


def _methods_reached(methods: list, texts: tuple[str, ...]) -> list[str]:
    """The code of `__init__`, `__call__` and of the methods named as attributes (`.fit`) in
    `texts` or in the code of a method already reached."""
    reached: list[str] = []
    named = set().union(*(_attribute_names(t) for t in texts))
    pending = list(methods)
    changed = True
    while changed:
        changed = False
        left = []
        for name, code in pending:
            if name in _RUN_UNNAMED or name in named:
                reached.append(code)
                named.update(_attribute_names(code))
                changed = True
            else:
                left.append((name, code))
        pending = left
    return reached


_ATTRIBUTE_NAME = re.compile(r"\.(\w+)\b")


@lru_cache(maxsize=512)
def _attribute_names(text: str) -> frozenset:
    """The names a text reads as attributes (`.fit`), found once per text: a file is searched
    for every class it imports, a method's code for every file that imports its class."""
    return frozenset(_ATTRIBUTE_NAME.findall(text))


_CLASS_NAME = re.compile(r"^class[ \t]+(\w+)\b", re.M)
_VALUE_NAME = re.compile(r"^(\w+)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)


@lru_cache(maxsize=1024)
def _class_starts(body: str) -> dict[str, tuple[int, int]]:
    """Where each top-level class of a module starts (the first of each name), read once."""
    found: dict[str, tuple[int, int]] = {}
    for m in _line_matches(_CLASS_NAME, _CLASS_WORD, body):
        found.setdefault(m.group(1), (m.start(), m.end()))
    return found


@lru_cache(maxsize=1024)
def _value_starts(body: str) -> dict[str, int]:
    """Where the statement binding each module-level name first ends its target, read once."""
    found: dict[str, int] = {}
    for m in _VALUE_NAME.finditer(body):
        found.setdefault(m.group(1), m.end())
    return found


def _line_start(body: str, at: int) -> int:
    return body.rfind("\n", 0, at) + 1


def _subclassed(text: str, name: str) -> bool:
    """A class of the text names `name` among its bases."""
    return name in _base_words(text)


_CLASS_BASES = re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\(([^)]*)", re.M)


@lru_cache(maxsize=64)
def _base_words(text: str) -> frozenset:
    """Every word of the base lists of the classes of a text, read once per text."""
    return frozenset(w for m in _line_matches(_CLASS_BASES, _CLASS_WORD, text) for w in re.findall(r"\w+", m.group(1)))


def _line_matches(pattern: re.Pattern, word: re.Pattern, text: str, back=None):
    """`pattern.finditer(text)` for a pattern of lines (`^` under `re.M`) whose first line
    holds `word`: found from each `word` back to its line's start (or to where `back` says
    the match starts, given that line's start). A pattern that starts with a literal is
    searched for at C speed; one that starts at any line's start tries every character."""
    last = end = -1
    for m in word.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        if start == last:
            continue
        last = start
        if back is not None:
            start = back(text, start)
        if start < end:
            continue  # inside the match before (a base list over several lines)
        found = pattern.match(text, start)
        if found is not None:
            end = found.end()
            yield found


def _import_lines(text: str):
    """(module, [(imported name, local name)]) of the import statements of a text, read by
    a cheap regex; the imported name is None where the module itself is bound."""
    for m in _line_matches(_IMPORT_LINE, _IMPORT_WORD, text):
        if m.group(1) is not None:
            module = m.group(1)
            pairs = [(part.split(" as ")[0].strip(), part.split(" as ")[-1].strip())
                     for part in m.group(2).split(",") if part.strip()]
            if module.strip(".") == "":
                # `from . import utils`: each name is a module of that package
                for name, local in pairs:
                    yield module + name, [(None, local)]
                continue
            yield module, pairs
        else:
            spec = m.group(3)
            module, _, alias = spec.partition(" as ")
            yield module.strip(), [(None, alias.strip() or module.strip().split(".")[0])]


def _module_name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


_BLOCKS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def _statements(tree: ast.Module):
    """Every statement, in the breadth-first order of `ast.walk` (a later import of a name
    wins), without entering expressions: imports are statements."""
    queue = deque(tree.body)
    while queue:
        node = queue.popleft()
        yield node
        for name in node._fields:
            if name in _BLOCKS:
                block = getattr(node, name)
                if isinstance(block, list):
                    queue.extend(block)


def _imports(tree: ast.Module, path: str) -> dict[str, str]:
    """Local name -> qualified name, with relative imports made absolute from the file's folder."""
    out: dict[str, str] = {}
    package_dir = os.path.dirname(os.path.abspath(path))
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    out[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_dir = package_dir
                for _ in range(node.level - 1):
                    base_dir = os.path.dirname(base_dir)
                module = node.module or ""
                prefix = "@" + base_dir + ("/" + module.replace(".", "/") if module else "")
                for a in node.names:
                    out[a.asname or a.name] = f"{prefix}:{a.name}"
            elif node.module:
                for a in node.names:
                    out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _qualify(expr: ast.expr, imports: dict[str, str], path: str) -> Optional[str]:
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    head = expr.id
    target = imports.get(head)
    if target is None:
        # a class of the same file
        return f"{os.path.abspath(path)}::{head}" if not parts else None
    if target.startswith("@"):
        folder, _, name = target[1:].partition(":")
        rel_parts = [name, *reversed(parts)]
        # `from .model import Recommender` -> <folder>/model.py::Recommender
        module_file = folder + ".py"
        if os.path.isfile(module_file):
            return f"{module_file}::{'.'.join(rel_parts)}" if len(rel_parts) == 1 else None
        pkg_init = os.path.join(folder, "__init__.py")
        if os.path.isfile(pkg_init) and len(rel_parts) == 1:
            return f"{pkg_init}::{name}"
        sub = os.path.join(folder, name + ".py")
        if os.path.isfile(sub) and len(rel_parts) == 2:
            return f"{sub}::{rel_parts[1]}"
        return None
    full = ".".join([target, *reversed(parts)])
    return CANONICAL.get(full, full)


_INDEX = ProjectIndex()


def project_index() -> ProjectIndex:
    """The index shared by every file a process checks."""
    return _INDEX

