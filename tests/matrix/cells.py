"""The generator: every (hazard, shape) cell as a bad program and its safe twin, written into
a folder as the files of a small project whose entry script is main.py."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property

from . import (shapes_bindings, shapes_calls, shapes_expressions, shapes_models,  # noqa: F401 (they register)
               shapes_objects, shapes_projects, shapes_reach, shapes_training)
from .hazards import HAZARDS, REPORT, Hazard, Variant
from .shape import ENTRY, SHAPES, Shape


def _prelude(text: str) -> str:
    lines = []
    uses_nn = re.search(r"\bnn\b", text) is not None
    if "torch." in text or uses_nn:
        lines.append("import torch")
    if uses_nn:
        lines.append("import torch.nn as nn")
    return "\n".join(lines) + "\n" if lines else ""


@dataclass(frozen=True)
class Program:
    """The files of one side of a cell, and where its hazard's finding belongs."""

    files: dict  # relative path -> text
    report_file: str
    report_line: int


def _program(variant: Variant, shape: Shape) -> Program:
    h = variant.hazard
    header = ("# expect-ok\n" if variant.safe else f"# expect-error: {h.error}\n")
    files, report = {}, None
    for name, body in shape.build(variant).items():
        if not name.endswith(".py"):
            files[name] = body
            continue
        text = _prelude(body) + body
        if name == ENTRY:
            text = header + text
        out = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.rstrip().endswith(REPORT):
                if report is not None:
                    raise ValueError(f"{shape.name}: two report lines")
                report = (name, number)
                line = line.rstrip()[:-len(REPORT)].rstrip()
            out.append(line)
        files[name] = "\n".join(out) + "\n"
    if report is None:
        raise ValueError(f"{h.code} x {shape.name}: no report line")
    return Program(files, *report)


@dataclass(frozen=True)
class Cell:
    hazard: Hazard
    shape: Shape

    @property
    def id(self) -> str:
        return f"{self.hazard.code}-{self.shape.name}"

    @cached_property
    def bad(self) -> Program:
        return _program(Variant(self.hazard, safe=False), self.shape)

    @cached_property
    def twin(self) -> Program:
        return _program(Variant(self.hazard, safe=True), self.shape)


def all_cells() -> list[Cell]:
    return [Cell(h, s) for h in HAZARDS for s in SHAPES if s.applies_to(h)]


def write(program: Program, folder: str) -> str:
    """Write a program's files under `folder`; the path of its entry script."""
    for name, text in program.files.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    return os.path.join(folder, ENTRY)
