"""One module per hazard family. Each defines `install(session) -> undo`, where `undo()` puts
torch back as it was (most only fill in the table of the one torch function mode, `watch.py`),
and may define `preload()` for a process that forks the runs.

What a run sees, by rule (each at the user's line, with the root cause as evidence where the
run knows it):

- raising, recorded before torch's exception goes on: SPL001 (`uncoalesced`); SPL102, SPL103,
  SPL106, SPL301-SPL303, SPL501, SPL503-SPL506, SPL601, SPL602 at the line (`raising`);
  SPL101, SPL104, SPL105, SPL107, SPL108, SPL203, SPL304, SPL502, SPL507, SPL508 in backward
  (`backward`); SPL401-SPL404, SPL504 at `step()` or at the optimizer's construction
  (`optimizers`);
- silent, proven by the run: SPL002-SPL005, SPL109, SPL603 (`silent`), SPL201, SPL202
  (`grads`), SPL204 (`custom_functions`).

What it does not see: a hazard on a line the run never reaches (after the first error, or on
data that does not trigger it, such as SPL202 with no zero gradient entry); ops inside a
custom Function's backward or a hook one by one (torch turns the mode off during
`backward()`; their exceptions are still placed at their line); a `coalesce()` copy kept
alive unused to the end; the other limits are in each module's docstring.
"""
