"""Positions: the engine counts 1-based lines and code points; a client counts 0-based lines
and the code units it negotiated (UTF-16 unless it asked otherwise)."""
from __future__ import annotations

from dataclasses import dataclass

from ..source import split_lines


@dataclass
class Lines:
    """A text split the way the engine counts lines, with a codec for the client's units."""

    lines: list[str]
    codec: object  # pygls PositionCodec

    @classmethod
    def of(cls, text: str, codec) -> "Lines":
        return cls(split_lines(text), codec)

    def to_client(self, line: int, column: int) -> tuple[int, int]:
        """1-based (line, code-point column) -> 0-based (line, client units), clamped."""
        if line < 1:
            return 0, 0
        if line > len(self.lines):
            return len(self.lines) - 1, self.codec.client_num_units(self.lines[-1])
        text = self.lines[line - 1]
        col = min(max(column - 1, 0), len(text))
        return line - 1, self.codec.client_num_units(text[:col])

    def from_client(self, line: int, character: int) -> tuple[int, int]:
        """0-based (line, client units) -> 1-based (line, code-point column), clamped."""
        if line >= len(self.lines):
            return len(self.lines), len(self.lines[-1]) + 1
        text, units, col = self.lines[line], 0, 0
        while col < len(text) and units < character:
            units += self.codec.client_num_units(text[col])
            col += 1
        return line + 1, col + 1

    def end(self) -> tuple[int, int]:
        """The 1-based position just past the last character."""
        return len(self.lines), len(self.lines[-1]) + 1
