"""The run-time checker: the static rules' hazards, seen while a program runs under torch.

Static analysis is the product; this confirms its findings on the user's own code and data,
and sees what the static pass could not follow. Importing this package does not import
torch: a `Session` does when it starts, so `sparselint check` stays free of torch.

    with Session() as session:
        run_the_program()
    findings = session.findings()      # Diagnostics, with the static rules' codes

`report.save`/`report.load` keep what a run saw for `sparselint check --runtime-report`.
"""
from .session import Session

__all__ = ["Session"]
