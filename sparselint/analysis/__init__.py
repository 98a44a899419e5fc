"""The analysis of one file, in the order its stages run.

- `relevance`: the cheap steps before LibCST parses anything: which rule tokens occur in the
  text (`tokens`) and which definitions and statements can matter (`reduce`).
- `project`: the project around the file: module resolution, imported classes and functions,
  and the summaries of model classes (`models`).
- `evaluation`: the facts of values (`facts`), how expressions and statements change them
  (`inference`), and the statement-ordered walk that drives them and every rule (`walker`).
- `calls`: calls into the project's functions and classes, analysed at each call site.
- `context`: what a rule may ask during the walk, and how it reports.
- `torchops`: what torch does: its API tables (`torchapi`), the probed op table (`optable`)
  and the mapping from a call site to its entry (`opcall`).
- `cst`: small LibCST helpers shared by the stages (`tree`, `syntax`, `names`).

The runner (discovery, configuration, cache, parallel runs, output, noqa, fixes) and the
language server sit beside this package and call it through `sparselint.engine`.
"""
