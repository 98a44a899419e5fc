"""The GitHub Action at the repository root (action.yml), tested by running its steps here the
way the runner does: each `run` script in `bash --noprofile --norc -eo pipefail`, with the
`${{ inputs.* }}` expressions of its environment filled in and GITHUB_ACTION_PATH set to this
checkout. Its install step installs into a fresh virtual environment."""
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from conftest import ROOT

BAD = "import torch\nadj = torch.sparse_coo_tensor(e, torch.ones(2), (2, 2))\nprint(adj.values())\n"


def load_action():
    with open(os.path.join(ROOT, "action.yml"), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def run_steps(action, inputs, env, cwd):
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update(inputs)
    last = None
    for step in action["runs"]["steps"]:
        assert step["shell"] == "bash" and "${{" not in step["run"], "inputs reach scripts only through env"
        step_env = dict(env)
        for key, value in (step.get("env") or {}).items():
            step_env[key] = re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: values[m.group(1)], str(value))
        last = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                              cwd=cwd, env=step_env, capture_output=True, text=True, timeout=900)
        if last.returncode != 0:
            return step["name"], last
    return None, last


@pytest.fixture(scope="module")
def runner_env(tmp_path_factory):
    venv = tmp_path_factory.mktemp("action-venv")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", GITHUB_ACTION_PATH=ROOT,
               GITHUB_WORKSPACE=str(venv))
    return venv, env


def test_the_action_declares_its_inputs():
    action = load_action()
    assert action["runs"]["using"] == "composite"
    assert {"paths", "args", "output-format", "output-file"} <= set(action["inputs"])
    assert action["inputs"]["output-format"]["default"] == "github"


def test_the_action_installs_from_its_checkout_and_annotates(runner_env, tmp_path):
    venv, env = runner_env
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(BAD)
    (tmp_path / "clean.py").write_text("x = 1\n")
    failed, r = run_steps(load_action(), {}, env, tmp_path)
    assert failed == "Run sparselint" and r.returncode == 1, r.stdout + r.stderr
    assert "::error title=sparselint (SPL001),file=src/model.py,line=3,col=7" in r.stdout
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import sparselint; print(sparselint.__file__)"],
                           env=env, capture_output=True, text=True, cwd=tmp_path).stdout
    assert where.startswith(str(venv)), where  # installed by the action, not the developer's copy
    # inputs: paths, args, and SARIF written to a file for code scanning
    failed, r = run_steps(load_action(), {"paths": "clean.py src", "args": "--exit-zero --select SPL0",
                                          "output-format": "sarif", "output-file": "sparselint.sarif"},
                          env, tmp_path)
    assert failed is None and r.returncode == 0, r.stdout + r.stderr
    log = json.loads((tmp_path / "sparselint.sarif").read_text())
    assert [res["ruleId"] for res in log["runs"][0]["results"]] == ["SPL001"]
    failed, r = run_steps(load_action(), {"paths": "clean.py"}, env, tmp_path)
    assert failed is None and r.returncode == 0, r.stdout + r.stderr
