import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
HAZARDS = os.path.join(SHARED, "hazards")


def run_cli(*args, cwd=None, input=None, env=None):
    """Run the installed `sparselint` command for real."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "sparselint", *args], cwd=cwd, input=input,
                          capture_output=True, text=isinstance(input, str) or input is None,
                          env=full_env, timeout=300)


@pytest.fixture
def cli():
    return run_cli


def all_fixtures():
    """Every fixture file, relative to fixtures/ (projects/ holds multi-file fixtures whose
    support modules have no `# expect-...` header and are linted but not run)."""
    out = []
    for root, dirs, files in os.walk(FIXTURES):
        dirs.sort()
        out.extend(os.path.relpath(os.path.join(root, f), FIXTURES) for f in sorted(files) if f.endswith(".py"))
    return out

