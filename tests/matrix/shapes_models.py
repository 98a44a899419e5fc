"""Shapes of the sparse-gradient model itself: `nn.Module` classes, containers of modules,
an `nn.Embedding` subclass passing `sparse=` to `super().__init__`, and the flag reaching the
constructor through configs, defaults, `**kwargs` and comparisons."""
from .shape import ENTRY, one, shape

MODULE = {"module"}


@shape("`nn.Module` class holding the embedding", "3", kinds=MODULE)
def model_class(v):
    return one(f"class Tower(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               f"        self.emb = {v.src}\n\n    def forward(self, x):\n        return self.emb(x)\n\n\n"
               f"model = Tower()\n{v.sink('model')}\n")


@shape("`nn.Embedding` subclass passing `sparse=` to `super().__init__`", "3", kinds=MODULE)
def embedding_subclass(v):
    return one(f"class SparseEmbedding(nn.Embedding):\n    def __init__(self, n, dim):\n"
               f"        super().__init__(n, dim, sparse={v.flag})\n\n\nemb = SparseEmbedding(10, 4)\n{v.sink('emb')}\n")


@shape("`nn.Embedding` subclass in another module", "3", kinds=MODULE)
def embedding_subclass_module(v):
    return {"layers.py": f"class SparseEmbedding(nn.Embedding):\n    def __init__(self, n, dim):\n"
                         f"        super().__init__(n, dim, sparse={v.flag})\n",
            ENTRY: f"from layers import SparseEmbedding\n\nemb = SparseEmbedding(10, 4)\n{v.sink('emb')}\n"}


@shape("`nn.ModuleList` indexing (`net.towers[0]`)", "1", kinds=MODULE)
def modulelist_index(v):
    return one(f"class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               f"        self.towers = nn.ModuleList([{v.src}, nn.Embedding(10, 4)])\n\n\n"
               f"net = Net()\n{v.sink('net.towers[0]')}\n")


@shape("`nn.Sequential`", "1", kinds=MODULE)
def sequential(v):
    return one(f"net = nn.Sequential({v.src})\n{v.sink('net')}\n")


@shape("`nn.ModuleDict` item", "1", kinds=MODULE)
def moduledict_item(v):
    return one(f"net = nn.ModuleDict({{'emb': {v.src}}})\n" + v.sink("net['emb']") + "\n")


@shape("flag from a config dict", "1", kinds=MODULE)
def flag_config_dict(v):
    return one(f"cfg = {{'sparse': {v.flag}, 'dim': 4}}\nemb = nn.Embedding(10, cfg['dim'], sparse=cfg['sparse'])\n"
               f"{v.sink('emb')}\n")


@shape("flag from an argparse-like namespace", "3", kinds=MODULE)
def flag_namespace(v):
    return one(f"from types import SimpleNamespace\n\nargs = SimpleNamespace(sparse={v.flag}, dim=4)\n"
               f"emb = nn.Embedding(10, args.dim, sparse=args.sparse)\n{v.sink('emb')}\n")


@shape("flag as a parameter default", "4", kinds=MODULE)
def flag_default(v):
    return one(f"def build(n, sparse={v.flag}):\n    return nn.Embedding(n, 4, sparse=sparse)\n\n\n"
               f"emb = build(10)\n{v.sink('emb')}\n")


@shape("flag through `**kwargs` to the constructor", "4", kinds=MODULE)
def flag_kwargs(v):
    return one(f"options = {{'sparse': {v.flag}}}\nemb = nn.Embedding(10, 4, **options)\n{v.sink('emb')}\n")


@shape("flag from `mode.lower() == \"sparse\"`", "1", kinds=MODULE)
def flag_lower_compare(v):
    mode = "Sparse" if v.flag == "True" else "Dense"
    return one(f"mode = '{mode}'\nemb = nn.Embedding(10, 4, sparse=mode.lower() == 'sparse')\n{v.sink('emb')}\n")


@shape("`getattr(nn, \"Embedding\")`", "3", kinds=MODULE)
def getattr_constructor(v):
    return one(f"Embedding = getattr(nn, 'Embedding')\nemb = Embedding(10, 4, sparse={v.flag})\n{v.sink('emb')}\n")


@shape("model in another module, flag passed to its constructor", "4", kinds=MODULE)
def model_module_flag(v):
    return {"model.py": "class Tower(nn.Module):\n    def __init__(self, sparse):\n        super().__init__()\n"
                        "        self.emb = nn.Embedding(10, 4, sparse=sparse)\n\n    def forward(self, x):\n"
                        "        return self.emb(x)\n",
            ENTRY: f"from model import Tower\n\nmodel = Tower(sparse={v.flag})\n{v.sink('model')}\n"}


@shape("dataclass config module, model module, entry wiring them", "3", kinds=MODULE)
def config_model_modules(v):
    return {"config.py": f"from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n    dim: int = 4\n"
                         f"    sparse: bool = {v.flag}\n",
            "model.py": "class Tower(nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n"
                        "        self.emb = nn.Embedding(10, cfg.dim, sparse=cfg.sparse)\n\n    def forward(self, x):\n"
                        "        return self.emb(x)\n",
            ENTRY: f"from config import Config\nfrom model import Tower\n\nmodel = Tower(Config())\n{v.sink('model')}\n"}


@shape("registry of model constructors in another module", "4", kinds=MODULE)
def model_registry_module(v):
    return {"models.py": f"class Tower(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                         f"        self.emb = {v.src}\n\n    def forward(self, x):\n        return self.emb(x)\n\n\n"
                         f"MODELS = {{'tower': Tower}}\n",
            ENTRY: f"from models import MODELS\n\nmodel = MODELS['tower']()\n{v.sink('model')}\n"}


@shape("model composed of a submodule defined in another module", "3", kinds=MODULE)
def submodule_module(v):
    return {"encoders.py": f"class Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                           f"        self.emb = {v.src}\n\n    def forward(self, x):\n        return self.emb(x)\n",
            ENTRY: "from encoders import Encoder\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
                   "        super().__init__()\n        self.encoder = Encoder()\n\n    def forward(self, x):\n"
                   f"        return self.encoder(x)\n\n\nmodel = Model()\n{v.sink('model')}\n"}


@shape("`nn.ModuleList` built by a comprehension over sizes read at run time", "3", kinds=MODULE)
def modulelist_comprehension(v):
    return one(f"import os\n\n\nclass Fields(nn.Module):\n    def __init__(self, sizes):\n        super().__init__()\n"
               f"        self.tables = nn.ModuleList([nn.Embedding(n, 4, sparse={v.flag}) for n in sizes])\n\n"
               f"    def forward(self, x):\n        return sum(t(x) for t in self.tables)\n\n\n"
               f"sizes = [int(s) for s in os.environ.get('FIELD_SIZES', '10,20').split(',')]\n"
               f"model = Fields(sizes)\n{v.sink('model')}\n")


@shape("`nn.ModuleDict` built by a comprehension, one table picked by key", "3", kinds=MODULE)
def moduledict_comprehension_key(v):
    return one(f"class Tables(nn.Module):\n    def __init__(self, sizes):\n        super().__init__()\n"
               f"        self.tables = nn.ModuleDict({{name: nn.Embedding(n, 4, sparse={v.flag}) "
               f"for name, n in sizes.items()}})\n\n\n"
               "model = Tables({'user': 10, 'item': 20})\n" + v.sink("model.tables['user']") + "\n")


@shape("base class in another module builds the embedding, subclass adds to it", "3", kinds=MODULE)
def base_constructor_module(v):
    return {"base.py": f"class Base(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
                       f"        self.emb = nn.Embedding(n, 4, sparse={v.flag})\n",
            ENTRY: "from base import Base\n\n\nclass Ranker(Base):\n    def __init__(self):\n"
                   "        super().__init__(10)\n        self.scale = 2.0\n\n    def forward(self, x):\n"
                   f"        return self.emb(x) * self.scale\n\n\nmodel = Ranker()\n{v.sink('model')}\n"}


@shape("`nn.Embedding` subclass without a constructor, in another module", "3", kinds=MODULE)
def embedding_subclass_no_init_module(v):
    return {"layers.py": "class Table(nn.Embedding):\n    pass\n",
            ENTRY: f"from layers import Table\n\nemb = Table(10, 4, sparse={v.flag})\n{v.sink('emb')}\n"}
