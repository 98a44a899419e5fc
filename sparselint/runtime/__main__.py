"""`python -m sparselint.runtime [OPTIONS] script.py ARGS` (or `-m module ARGS`): run a program
as python would, under the run-time checker; its findings are printed on stderr at its end."""
from __future__ import annotations

import sys

from .command import execute
from .runner import UsageError, parse_command

USAGE = """usage: python -m sparselint.runtime [OPTIONS] script.py ARGS...
       python -m sparselint.runtime [OPTIONS] -m module ARGS...

Run a program as `python script.py ARGS` would, with the run-time checks of sparselint
installed into torch; the hazards it saw are printed on stderr when it ends.

options (before the program):
  --report FILE         write what the run saw to FILE (for `sparselint check --runtime-report`)
  --output-format FMT   concise, full, json, sarif, github, ... as `sparselint check` (default:
                        the configuration's output-format, else concise)
  -o, --output-file F   print the findings to F instead of stderr
  --exit-zero           exit 0 when the program succeeds, even if hazards were seen
  -h, --help            show this help

exit status: the program's own when it fails; else 1 if a hazard was seen, 0 if none; 2 for
a command that cannot start."""

_VALUED = {"--report": "report_path", "--output-format": "output_format", "-o": "output_file",
           "--output-file": "output_file"}


def parse(argv: list[str]) -> tuple[dict, list[str]]:
    """The checker's options (all before the program) and the program's words."""
    options: dict = {}
    i = 0
    while i < len(argv):
        word = argv[i]
        name, eq, value = word.partition("=")
        if name in _VALUED:
            if not eq:
                if i + 1 >= len(argv):
                    raise UsageError(f"{word} needs a value")
                i, value = i + 1, argv[i + 1]
            options[_VALUED[name]] = value
        elif word == "--exit-zero":
            options["exit_zero"] = True
        elif word == "--":
            i += 1
            break
        else:
            break
        i += 1
    fmt = options.get("output_format")
    if fmt is not None:
        from ..output import FORMATS
        if fmt not in FORMATS:
            raise UsageError(f"--output-format must be one of {', '.join(FORMATS)}")
    return options, argv[i:]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["-h"], ["--help"]) or not argv:
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    try:
        options, words = parse(argv)
        return execute(parse_command(words, python_word=False), **options)
    except UsageError as exc:
        print(f"sparselint: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
