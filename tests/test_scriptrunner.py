"""The script runner behind the fixture contract: a child forked from an interpreter that
imported torch once must behave as `python script.py` does, or fixtures would prove nothing."""
import os
import subprocess

import pytest

from sparselint import scriptrunner

pytestmark = pytest.mark.torch

PROGRAMS = {
    "raises.py": "import torch\nx = torch.ones(2)\nraise RuntimeError('Cannot get values on an uncoalesced tensor')\n",
    "exits.py": "import sys\nprint('partial')\nsys.exit(3)\n",
    "exits_with_text.py": "import sys\nsys.exit('bad config')\n",
    "dies.py": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
    "sibling.py": "import helper_mod\nimport sys\nprint(__name__, helper_mod.VALUE, sys.argv[0].endswith('sibling.py'))\n",
    "reads_stdin.py": "import sys\nprint(repr(sys.stdin.read()))\n",
    "chained.py": "try:\n    {}['k']\nexcept KeyError as e:\n    raise ValueError('outer') from e\n",
    "cwd.py": "import os\nprint(os.path.basename(os.getcwd()))\n",
    "adam_sparse.py": "import sys, torch\ne = torch.nn.Embedding(3, 2, sparse=True)\nopt = torch.optim.Adam(e.parameters())\n"
                      "e(torch.tensor([1])).sum().backward()\nprint('torch._dynamo' in sys.modules)\nopt.step()\n",
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("programs")
    (folder / "helper_mod.py").write_text("VALUE = 42\n")
    for name, text in PROGRAMS.items():
        (folder / name).write_text(text)
    return folder


def run(path, fork: bool, timeout=60):
    env = dict(os.environ, PYTHONWARNINGS="ignore", SPARSELINT_FORK_RUNNER="1" if fork else "0")
    return scriptrunner.run_python(str(path), env, timeout)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_forked_run_is_a_fresh_interpreter_run(programs, name):
    forked, fresh = run(programs / name, True), run(programs / name, False)
    assert forked.returncode == fresh.returncode
    assert forked.stdout == fresh.stdout
    # Tracebacks name the same lines and end in the same exception line.
    assert forked.stderr.strip().splitlines()[-1:] == fresh.stderr.strip().splitlines()[-1:]


def test_what_each_program_does(programs):
    assert run(programs / "raises.py", True).returncode == 1
    assert run(programs / "exits.py", True).returncode == 3
    assert run(programs / "dies.py", True).returncode == -11
    assert run(programs / "sibling.py", True).stdout == "__main__ 42 True\n"
    assert run(programs / "reads_stdin.py", True).stdout == "''\n"
    assert run(programs / "exits_with_text.py", True).stderr.strip() == "bad config"


def test_a_run_past_its_timeout_is_killed_and_the_server_goes_on(tmp_path):
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(60)\n")
    with pytest.raises(subprocess.TimeoutExpired):
        run(slow, True, timeout=1)
    ok = tmp_path / "ok.py"
    ok.write_text("print('fine')\n")
    assert run(ok, True).stdout == "fine\n"


def test_one_server_serves_every_environment(tmp_path):
    """pytest changes PYTEST_CURRENT_TEST for every test: a server per environment would
    import torch once per test and keep each one alive."""
    show = tmp_path / "show.py"
    show.write_text("import os\nprint(os.environ['MATRIX_CELL'])\n")
    outputs, servers = [], set()
    for cell in ("a", "b"):
        env = dict(os.environ, MATRIX_CELL=cell, SPARSELINT_FORK_RUNNER="1")
        outputs.append(scriptrunner.run_python(str(show), env).stdout)
        servers.add(scriptrunner._server.proc.pid)
    assert outputs == ["a\n", "b\n"] and len(servers) == 1
