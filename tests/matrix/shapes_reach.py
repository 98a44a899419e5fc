"""Shapes out of reach of any static analysis: what decides the hazard is read from a file
when the program runs. They stay in the matrix so that the page says so, and a finding on
them would be a guess (a test fails if the engine ever reports one)."""
from .shape import ENTRY, shape

FROM_FILE = "the choice is read from a file at run time"


@shape("value chosen by a name read from a file", "1", out_of_reach=FROM_FILE)
def choice_from_file(v):
    other = v.hazard.safe_source
    return {"choice.txt": "main\n",
            ENTRY: f"with open('choice.txt') as fh:\n    choice = fh.read().strip()\n"
                   f"x = {v.src} if choice == 'main' else {other}\n{v.sink('x')}\n"}


@shape("factory module imported by a name read from a file", "2", out_of_reach=FROM_FILE)
def module_name_from_file(v):
    return {"module.txt": "factory\n",
            "factory.py": f"def make():\n    return {v.src}\n",
            ENTRY: "import importlib\n\nwith open('module.txt') as fh:\n    factory = importlib.import_module(fh.read().strip())\n"
                   f"x = factory.make()\n{v.sink('x')}\n"}


@shape("`sparse=` flag read from a JSON config file", "1", kinds={"module"}, out_of_reach=FROM_FILE)
def flag_from_json(v):
    return {"config.json": '{"sparse": %s}\n' % v.flag.lower(),
            ENTRY: "import json\n\nwith open('config.json') as fh:\n    cfg = json.load(fh)\n"
                   f"emb = nn.Embedding(10, 4, sparse=cfg['sparse'])\n{v.sink('emb')}\n"}


@shape("optimizer name read from a file", "4", codes={"SPL401"}, out_of_reach=FROM_FILE)
def optimizer_name_from_file(v):
    return {"optim.txt": "Adam\n",
            ENTRY: f"with open('optim.txt') as fh:\n    name = fh.read().strip()\nemb = {v.src}\n"
                   f"opt = getattr(torch.optim, name)(emb.parameters(), lr=0.1)  # <report>\n"
                   f"emb(torch.tensor([1, 2])).sum().backward()\nopt.step()\n"}
