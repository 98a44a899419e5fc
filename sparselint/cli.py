"""The command line: `sparselint [check] PATH...`, `sparselint rule CODE`."""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

import click

from . import __version__
from . import output, pyproject
from .config import ConfigError, Settings, check_selectors, split_list
from .diagnostics import INTERNAL_ERROR, FileResult
from .discovery import Scope, discover, force_excluded
from .cache import Cache, default_directory
from .rule import all_rules, rule_by_code  # rule modules are imported only when asked for

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _DefaultToCheck(click.Group):
    """`sparselint PATH` means `sparselint check PATH`, as in ruff."""

    def parse_args(self, ctx, args):
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version", "-V")):
            args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="sparselint")
def cli() -> None:
    """Find PyTorch sparse-tensor and autograd hazards before they fail at run time.

    `sparselint PATH...` is short for `sparselint check PATH...` (default path: the current
    directory); `sparselint check --help` lists its options.
    """


@cli.command()
@click.argument("paths", nargs=-1)
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (comma-separated); ALL for every rule.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable.")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable on top of --select.")
@click.option("--fix/--no-fix", default=None, help="Apply safe fixes in place (--no-fix: not even when the configuration says `fix = true`).")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=None,
              help="Also apply fixes that may change behaviour (--no-unsafe-fixes: not even when the configuration says so).")
@click.option("--diff", is_flag=True, help="Print the fixes as a diff instead of writing them (also with --fix); exit 1 if any.")
@click.option("--output-format", type=click.Choice(output.FORMATS), default=None,
              help="concise (default), full, json, json-lines, github, sarif, gitlab, junit, pylint, grouped, azure, rdjson.")
@click.option("--statistics", is_flag=True,
              help="Print the number of findings per rule instead of the findings (JSON with --output-format json).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--stdin-filename", default=None,
              help="Read source from stdin and report it under this name (a .ipynb name reads a notebook).")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: the number of cores).")
@click.option("--no-cache", is_flag=True, help="Read and write no cached results.")
@click.option("--cache-dir", default=None, help="Where cached results live (default: .sparselint_cache in the project root).")
@click.option("--config", "config_path", multiple=True,
              help="Use this pyproject.toml for every file instead of each file's nearest one; or a TOML "
                   "`KEY = VALUE` setting laid over every configuration (repeatable): --config \"select = ['SPL0']\".")
@click.option("--force-exclude", is_flag=True,
              help="Apply exclusions (yours and the built-in ones) to paths named on the command line too.")
@click.option("--respect-gitignore/--no-respect-gitignore", default=None,
              help="Skip what .gitignore ignores beneath the named paths (default: on).")
@click.option("--show-settings", is_flag=True, help="Print the resolved settings of the first path and exit.")
@click.option("--show-fixes", is_flag=True, help="List the fixes applied, per file and rule.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: SPLnnn` to every line with a finding.")
@click.option("--file-timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds of CPU time one file may take before it is reported with SPL905.")
@click.option("-o", "--output-file", default=None, help="Write the findings and summary to this file instead of stdout.")
@click.option("--show-files", is_flag=True, help="Print the files that would be checked and exit.")
@click.option("--fix-only", is_flag=True,
              help="Apply fixes, but neither report nor exit non-zero for the findings that remain.")
@click.option("--exit-non-zero-on-fix", is_flag=True,
              help="Exit 1 when a fix was applied, even if no finding remains.")
@click.option("--isolated", is_flag=True, help="Read no configuration file (pyproject.toml).")
@click.option("--extend-exclude", multiple=True,
              help="Glob patterns of paths not to check, on top of the configured and built-in ones (comma-separated or repeated).")
@click.option("--per-file-ignores", multiple=True,
              help="GLOB:CODES, codes ignored in the files matching GLOB (relative to the current directory); "
                   "replaces the configured ones. Repeatable.")
@click.option("--extend-per-file-ignores", multiple=True,
              help="Like --per-file-ignores, on top of the configured ones.")
@click.option("-w", "--watch", is_flag=True, help="Check again whenever a file changes (polling; Ctrl-C stops).")
@click.option("--runtime-report", default=None, metavar="FILE",
              help="A report of `sparselint run --report FILE`: mark the findings the run saw as confirmed, and "
                   "list what it saw in the checked files that no finding matches.")
def check(paths, select, ignore, extend_select, fix, unsafe_fixes, diff, output_format, statistics,
          exit_zero, stdin_filename, quiet, jobs, no_cache, cache_dir, config_path, force_exclude,
          respect_gitignore, show_settings, show_fixes, add_noqa, file_timeout, **more):
    """Check files and directories (default: the current directory)."""
    if more.pop("watch") and not os.environ.get("_SPARSELINT_WATCHED"):
        from .watch import watch
        return watch(sys.argv[1:], list(paths) or ["."])
    fix_only, exit_on_fix = more["fix_only"], more["exit_non_zero_on_fix"]
    if fix_only and fix is None:
        fix = True
    paths = list(paths)
    # As in ruff: with --stdin-filename the source comes from stdin, and paths are ignored.
    from_stdin = paths == ["-"] or stdin_filename is not None
    if "-" in paths and not from_stdin:
        raise ConfigError("`-` (stdin) cannot be combined with other paths")
    for ignored in paths if stdin_filename is not None else ():
        if ignored != "-":
            click.echo(f"sparselint: warning: Ignoring file {ignored} in favor of standard input.", err=True)
    paths = paths or ["."]
    if add_noqa and (fix or diff):
        raise ConfigError("--add-noqa cannot be combined with --fix or --diff")
    if add_noqa and from_stdin:
        raise ConfigError("--add-noqa needs files, not stdin")
    from . import cli_options
    config_file, inline_settings = pyproject.config_arguments(config_path)
    if more["isolated"] and config_file:
        raise ConfigError("--isolated cannot be combined with a --config file")
    resolver = pyproject.Resolver(config_file, inline_settings, isolated=more["isolated"])
    flags = _Flags(select=check_selectors(split_list(select), "--select"),
                   ignore=check_selectors(split_list(ignore), "--ignore"),
                   extend_select=check_selectors(split_list(extend_select), "--extend-select"),
                   fix=fix, unsafe_fixes=unsafe_fixes, diff=diff, file_timeout=file_timeout,
                   respect_gitignore=respect_gitignore,
                   extend_exclude=tuple(split_list(more["extend_exclude"])),
                   per_file_ignores=cli_options.per_file_ignores(more["per_file_ignores"]),
                   extend_per_file_ignores=cli_options.per_file_ignores(more["extend_per_file_ignores"],
                                                                        "--extend-per-file-ignores") or {})
    # Output settings belong to the run, not to a file: they come from the current folder's
    # configuration (or --config), as in ruff.
    run_config = resolver.for_dir(os.getcwd())
    output_format = output_format or run_config.output_format or "concise"
    runtime_report = more["runtime_report"] or run_config.runtime_report
    run_findings = _run_findings(runtime_report) if runtime_report else None
    if show_settings:
        first = stdin_filename if from_stdin and stdin_filename else paths[0] if not from_stdin else "."
        file_config = resolver.for_dir(first) if os.path.isdir(first) else resolver.for_file(first)
        settings = flags.settings(file_config)
        excludes = tuple((file_config.exclude or []) + file_config.extend_exclude) + flags.extend_exclude
        click.echo(f"config file: {file_config.path or '(none)'}")
        click.echo(f"rules: {', '.join(r.code for r in settings.rules())}")
        for name in ("select", "ignore", "extend_select", "fix", "unsafe_fixes", "per_file_ignores", "target_torch_version",
                     "api_entry_points"):
            click.echo(f"{name.replace('_', '-')}: {getattr(settings, name)!r}")
        click.echo(f"exclude: {excludes!r}\nrespect-gitignore: {flags.gitignore(file_config)}\noutput-format: {output_format}")
        click.echo(f"runtime-report: {runtime_report or ''}")
        return
    results, sources, errors = [], {}, []
    fixing = False  # whether any file's settings write fixes
    # results checked with unsafe fixes on: a fix of theirs still listed was refused (it
    # overlapped another or would not parse), not hidden behind `--unsafe-fixes`
    unsafe_on: set = set()
    # The engine (and LibCST) is imported only when a file needs checking: `--version`,
    # `rule` and warm runs answered by the cache do without it.
    from .parallel import check_files

    if from_stdin:
        data = sys.stdin.buffer.read()
        name = stdin_filename or "-"
        settings = flags.settings(resolver.for_file(name) if stdin_filename else run_config)
        fixing = settings.fix and not diff
        from .engine import check_bytes, check_notebook
        if force_exclude and stdin_filename and force_excluded(stdin_filename, _scope(resolver.for_file(name), flags)):
            result = FileResult(path=name)  # passed through unchecked, as in ruff
        elif name.endswith(".ipynb"):
            result = check_notebook(data, name, settings, settings.rules_for(name))
        else:
            result = check_bytes(data, name, settings, settings.rules_for(name))
        results.append(result)
        if settings.unsafe_fixes:
            unsafe_on.add(id(result))
        if result.fixed_source is not None:
            if diff:
                click.echo(output.unified_diff(name, result.original_source, result.fixed_source), nl=False)
            else:
                # As ruff does: the fixed source goes to stdout, findings to stderr.
                sys.stdout.write(result.fixed_source)
                sys.stdout.flush()
        elif fixing:
            sys.stdout.write(_text_of(data))
            sys.stdout.flush()
        _collect_source(result, data, sources)
    else:
        from . import special
        # a FIFO or /dev/null named on the command line is read as a file, as in ruff
        specials = [p for p in paths if special.is_special(p)]
        found = discover([p for p in paths if p not in specials], lambda d: _scope(resolver.for_dir(d), flags),
                         force_exclude=force_exclude)
        for missing in found.missing:
            errors.append(f"{missing}: no such file or directory")
        for skipped, why in found.skipped:
            click.echo(f"sparselint: warning: skipped {skipped}: {why}", err=True)
        if more["show_files"]:
            for path in sorted(os.path.abspath(p) for p in found.files + specials):
                click.echo(path)
            for e in (f"{m}: no such file or directory" for m in found.missing):
                click.echo(f"sparselint: error: {e}", err=True)
            sys.exit(EXIT_ERROR if found.missing else EXIT_CLEAN)
        if not found.files and not found.missing and not specials:
            click.echo("sparselint: warning: No Python files found under the given path(s)", err=True)
        # Each file is checked with the settings of its own nearest configuration.
        groups: dict[int, tuple[Settings, list[int]]] = {}
        for i, path in enumerate(found.files):
            cfg = resolver.for_file(path)
            groups.setdefault(id(cfg), (flags.settings(cfg), []))[1].append(i)
        checked: list = [None] * len(found.files)
        progress = output.Progress(len(found.files)) if not quiet else None
        for settings, members in groups.values():
            fixing = fixing or (settings.fix and not diff)
            cache = None
            if not (no_cache or settings.fix):
                cache = Cache(cache_dir or default_directory(run_config.root), settings.key())
            group_results = check_files([found.files[i] for i in members], settings, jobs, cache,
                                        progress.step if progress else None)
            for i, result in zip(members, group_results):
                checked[i] = result
                if settings.unsafe_fixes:
                    unsafe_on.add(id(result))
        if progress:
            progress.done()
        for path in specials:
            found.files.append(path)
            checked.append(special.check(path, flags.settings(resolver.for_file(path))))
        for path, result in zip(found.files, checked):
            results.append(result)
            if result.fixed_source is not None:
                if diff:
                    click.echo(output.unified_diff(path, result.original_source, result.fixed_source), nl=False)
                else:
                    from .engine import write_fixed
                    problem = write_fixed(path, result)
                    if problem:
                        errors.append(problem)
                        result.fixes_applied = 0
            if output_format == "full":
                try:
                    with open(path, "rb") as fh:
                        _collect_source(result, fh.read(), sources)
                except OSError:
                    pass

    used = {u for r in results for u in getattr(r, "noqa_used_elsewhere", ())}
    if used:
        from .diagnostics import UNUSED_NOQA
        from .suppression import drop_used_elsewhere
        for r in results:
            r.diagnostics = drop_used_elsewhere(r.diagnostics, used, UNUSED_NOQA)

    if add_noqa:
        from . import noqa
        added, problems = noqa.add_all(results)
        errors.extend(problems)
        for e in errors:
            click.echo(f"sparselint: error: {e}", err=True)
        click.echo(f"Added {added} noqa directive{'s' if added != 1 else ''}.")
        sys.exit(EXIT_ERROR if errors else EXIT_CLEAN)

    # A finding inside a helper module is reported by each file that calls it with the same
    # facts; show it once, with the fix its own file's check offers (a caller's copy has
    # none). (In a notebook, the same line and column recur in every cell.)
    unique: dict = {}
    for d in (d for r in results for d in r.diagnostics):
        key = (d.path, d.cell, d.line, d.column, d.code)
        if key not in unique or (unique[key].fix is None and d.fix is not None):
            unique[key] = d
    diagnostics = list(unique.values())
    if run_findings is not None:
        diagnostics = _merge_run(diagnostics, run_findings, [r.path for r in results], resolver, flags)
        from .runtime.merge import changed_since
        for path in changed_since(runtime_report, run_findings, [r.path for r in results]):
            click.echo(f"sparselint: warning: {path} changed after the run-time report {runtime_report} was "
                       f"written: the run's lines may have moved", err=True)
        named = {d.path for d in run_findings}
        if named and not any(os.path.exists(p) for p in named):
            # the report names files by absolute path: one written in another checkout matches nothing
            click.echo(f"sparselint: warning: none of the {len(named)} files the run-time report {runtime_report} "
                       f"names exists here (was it written in another checkout?)", err=True)
    fixed = sum(r.fixes_applied for r in results)
    # With --diff, or --fix on stdin, the code is the output and findings go to stderr.
    out = sys.stderr if diff or (fixing and from_stdin) else sys.stdout
    output_file = cli_options.open_output(more["output_file"])
    if output_file is not None:
        out = output_file
    if fix_only:
        # as ruff: what remains is neither listed nor counted against the exit code
        diagnostics = []
    machine = output_format in output.MACHINE_FORMATS
    # Human text never goes into a machine-readable stream.
    human = sys.stderr if machine else out
    color = output.use_color(out) and output_file is None
    if statistics and output_format == "json":
        click.echo(json.dumps(output.statistics_json(diagnostics), indent=2), file=out)
    elif statistics and not machine:
        if diagnostics:
            click.echo(output.statistics(diagnostics), file=out)
    else:
        rendered = output.render(diagnostics, output_format, sources, color=color)
        if rendered:
            click.echo(rendered, file=out, color=color)
        if statistics and diagnostics:
            click.echo(output.statistics(diagnostics), file=human)
    if show_fixes and fixed:
        click.echo(output.fixes_applied(results, would=diff), file=human)
    if not machine and not quiet and (diagnostics or fixed or not errors or fix_only):
        fixable = sum(1 for d in diagnostics if d.fix is not None and d.fix.safe)
        hidden_in = {d.path for r in results if id(r) not in unsafe_on for d in r.diagnostics}
        hidden = sum(1 for d in diagnostics if d.fix is not None and not d.fix.safe and d.path in hidden_in)
        if fix_only:
            hidden = sum(1 for r in results if id(r) not in unsafe_on
                         for d in r.diagnostics if d.fix is not None and not d.fix.safe)
        click.echo(output.summary(len(diagnostics), 0 if fixing else fixable, fixed,
                                  hidden=hidden, would=diff, fix_only=fix_only), file=out)
        if run_findings is not None and not fix_only:
            from .runtime.merge import summary
            click.echo(summary(diagnostics, runtime_report), file=out)
    if output_file is not None:
        output_file.close()
    for e in errors:
        click.echo(f"sparselint: error: {e}", err=True)

    internal = any(d.code == INTERNAL_ERROR[0] for r in results for d in r.diagnostics)
    if errors or internal:
        sys.exit(EXIT_ERROR)
    if diff:
        sys.exit(EXIT_FINDINGS if fixed else EXIT_CLEAN)
    if exit_on_fix and fixed and not exit_zero:
        sys.exit(EXIT_FINDINGS)
    if diagnostics and not exit_zero:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_CLEAN)


@dataclass(frozen=True)
class _Flags:
    """What the command line says; combined with each file's configuration into its settings."""
    select: list
    ignore: list
    extend_select: list
    fix: Optional[bool]  # None: as the configuration says
    unsafe_fixes: Optional[bool]
    diff: bool
    file_timeout: float
    respect_gitignore: Optional[bool]
    extend_exclude: tuple = ()
    per_file_ignores: Optional[dict] = None  # from the command line, relative to the current directory
    extend_per_file_ignores: dict = field(default_factory=dict)

    def settings(self, cfg: pyproject.FileConfig) -> Settings:
        from .cli_options import relative_to
        pfi = dict(cfg.per_file_ignores) if self.per_file_ignores is None \
            else relative_to(cfg.root, self.per_file_ignores)
        for glob, codes in relative_to(cfg.root, self.extend_per_file_ignores).items():
            pfi[glob] = list(pfi.get(glob, [])) + list(codes)
        return Settings(
            # `select = []` selects nothing, as in ruff; only an absent `select` means ALL
            select=tuple(self.select or (cfg.select if cfg.select is not None else ["ALL"])),
            ignore=tuple(cfg.ignore + self.ignore),
            extend_select=tuple(cfg.extend_select + self.extend_select),
            fix=self.diff or (cfg.fix if self.fix is None else self.fix),
            unsafe_fixes=cfg.unsafe_fixes if self.unsafe_fixes is None else self.unsafe_fixes,
            per_file_ignores=tuple((k, tuple(v)) for k, v in sorted(pfi.items())),
            root=cfg.root,
            target_torch_version=cfg.target_torch_version or "",
            api_entry_points=cfg.api_entry_points,
            file_timeout=self.file_timeout,
        )

    def gitignore(self, cfg: pyproject.FileConfig) -> bool:
        return cfg.respect_gitignore if self.respect_gitignore is None else self.respect_gitignore


def _run_findings(path: str) -> list:
    """The findings of a run-time report (no torch needed); a bad file is a usage error."""
    from .runtime.merge import load
    from .runtime.report import ReportError
    try:
        return load(path)
    except ReportError as exc:
        raise ConfigError(str(exc)) from None


def _merge_run(diagnostics: list, run_findings: list, checked: list, resolver, flags: _Flags) -> list:
    """The static findings marked by the run, and what it alone saw in the checked files, kept
    only where the file's rules are selected and no `# noqa` covers the line."""
    from .config import resolve_codes
    from .runtime.merge import merge, not_suppressed_by, suppressions_of
    parsed = {}

    def selected(path, d) -> bool:
        st = flags.settings(resolver.for_file(path))
        codes = resolve_codes(st.select, (*st.ignore, *st.ignored_for(path)), st.extend_select)
        if d.code not in codes:
            return False
        if path not in parsed:
            parsed[path] = suppressions_of(path)
        return not_suppressed_by(parsed[path], d)

    return merge(diagnostics, run_findings, checked, selected)


def _scope(cfg: pyproject.FileConfig, flags: _Flags) -> Scope:
    # --extend-exclude patterns are matched like the configuration's (relative to its folder,
    # or against any part of a path)
    return Scope(exclude=tuple((cfg.exclude or []) + cfg.extend_exclude) + flags.extend_exclude, root=cfg.root,
                 respect_gitignore=flags.gitignore(cfg))


def _text_of(data: bytes) -> str:
    from .source import DecodeError, decode
    try:
        return decode(data).text
    except DecodeError:
        return data.decode("utf-8", "surrogateescape")


def _collect_source(result, data: bytes, sources: dict) -> None:
    from .source import DecodeError, decode
    if result.path.endswith(".ipynb"):
        from . import notebook
        try:
            for cell, text in notebook.cell_sources(notebook.load(data)).items():
                sources[(result.path, cell)] = text
        except notebook.NotebookError:
            pass
        return
    try:
        sources[result.path] = decode(data).text
    except DecodeError:
        pass


@cli.command()
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule.")
def rule(code, show_all):
    """Explain a rule: `sparselint rule SPL001` (or its name)."""
    if show_all or not code:
        for r in all_rules():
            click.echo(f"{r.code}  {r.name:<34} {r.summary()}")
        from . import engine_codes
        for c in engine_codes.CODES:
            click.echo(f"{c.code}  {c.name:<34} {c.summary}")
        return
    r = rule_by_code(code)
    if r is None:
        # the engine's own codes (SPL900-905) are printed too, so they are explained too
        from . import engine_codes
        known = engine_codes.lookup(code)
        if known is not None:
            click.echo(f"# {known.name} ({known.code})\n")
            click.echo(f"{known.summary}\n")
            click.echo(known.doc)
            return
        raise ConfigError(f"unknown rule `{code}` (see `sparselint rule --all`)")
    click.echo(f"# {r.name} ({r.code})\n")
    click.echo(f"Fails with: `{r.error}` ({output._when(r.when)}).")
    click.echo(f"Verified with torch {', '.join(r.torch_versions)}.\n")
    click.echo(r.doc())


@cli.command()
def version():
    """Print the version."""
    click.echo(f"sparselint {__version__}")


@cli.command(name="config")
@click.argument("key", required=False)
def config_command(key):
    """List the settings of [tool.sparselint], or explain one: `sparselint config select`."""
    from .commands import describe
    click.echo(describe(key))


@cli.command()
@click.option("--cache-dir", default=None, help="Also remove this cache folder (default: SPARSELINT_CACHE_DIR).")
def clean(cache_dir):
    """Remove the .sparselint_cache folders beneath the current directory."""
    from .commands import clean as remove
    for path in remove(os.getcwd(), cache_dir or os.environ.get("SPARSELINT_CACHE_DIR")):
        click.echo(f"Removing cache at: {path}")


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--report", "report_path", default=None, metavar="FILE",
              help="Write what the run saw to FILE, for `sparselint check --runtime-report FILE`.")
@click.option("--output-format", type=click.Choice(output.FORMATS), default=None,
              help="How the findings are printed, as for `check` (default: `output-format` of the configuration, "
                   "else concise).")
@click.option("-o", "--output-file", default=None, help="Print the findings to this file instead of stderr.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 when the program succeeds, even if hazards were seen.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True)
def run(report_path, output_format, output_file, exit_zero, command):
    """Run a program under the run-time checker: `sparselint run -- python train.py ARGS`
    (or `-- python -m pkg ARGS`, `-- train.py ARGS`). The program runs in this interpreter,
    as python would run it; the hazards it saw are printed on stderr when it ends (needs
    `pip install 'sparselint[runtime]'`). Exit status: the program's own when it fails, else 1
    if a hazard was seen, 0 if none."""
    from .runtime.command import execute
    from .runtime.runner import UsageError, parse_command
    try:
        program = parse_command(list(command))
        status = execute(program, report_path=report_path, output_format=output_format, exit_zero=exit_zero,
                         output_file=output_file)
    except UsageError as exc:
        raise ConfigError(str(exc)) from None
    sys.exit(status)


@cli.command()
def server():
    """Run the language server for editors over stdio (needs `pip install 'sparselint[lsp]'`)."""
    from .lsp import MissingExtra, serve
    try:
        serve()
    except MissingExtra as exc:
        raise ConfigError(str(exc)) from None


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except ConfigError as exc:
        click.echo(f"sparselint: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):
            sys.exit(130)  # Ctrl-C, which click turns into Abort: 128 + SIGINT, as ruff
        click.echo("sparselint: aborted", err=True)
        sys.exit(EXIT_ERROR)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        sys.exit(130)
    except SystemExit:
        raise
    except BrokenPipeError:
        sys.exit(EXIT_ERROR)
    except Exception as exc:  # never a traceback for the user
        click.echo(f"sparselint: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(EXIT_ERROR)
