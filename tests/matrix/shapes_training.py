"""Shapes of the training step for the optimizer and clipping hazards: the optimizer chosen
by name, through getattr, a registry or `functools.partial`; parameters as groups, lists and
filtered comprehensions; clipping over `optimizer.param_groups`; the step in a helper module."""
from .shape import ENTRY, one, shape

INPUT = "torch.tensor([1, 2])"


def _adam(v, build, params="emb.parameters()", head=""):
    """A training step whose optimizer is made by `build` (a format with {params})."""
    return one(f"{head}emb = {v.src}\nopt = {build.format(params=params)}  # <report>\n"
               f"emb({INPUT}).sum().backward()\nopt.step()\n")


@shape("optimizer class from `getattr(torch.optim, \"Adam\")`", "4", codes={"SPL401"})
def optimizer_getattr(v):
    return _adam(v, "getattr(torch.optim, 'Adam')({params}, lr=0.1)")


@shape("optimizer chosen by `name.lower() == \"adam\"`", "1", codes={"SPL401"})
def optimizer_by_name(v):
    return _adam(v, "opt_cls({params}, lr=0.1)",
                 head="name = 'Adam'\nopt_cls = torch.optim.Adam if name.lower() == 'adam' else torch.optim.SGD\n")


@shape("optimizer from a registry dict", "4", codes={"SPL401"})
def optimizer_registry(v):
    return _adam(v, "OPTIMIZERS['adam']({params}, lr=0.1)",
                 head="OPTIMIZERS = {'adam': torch.optim.Adam, 'sgd': torch.optim.SGD}\n")


@shape("optimizer through `functools.partial`", "4", codes={"SPL401"})
def optimizer_partial(v):
    return _adam(v, "make_optimizer({params})",
                 head="import functools\n\nmake_optimizer = functools.partial(torch.optim.Adam, lr=0.1)\n")


@shape("optimizer chosen by a config attribute in an if statement", "1", codes={"SPL401"})
def optimizer_config_if(v):
    return one(f"from types import SimpleNamespace\n\ncfg = SimpleNamespace(optim='adam')\nemb = {v.src}\n"
               f"if cfg.optim == 'adam':\n    opt = torch.optim.Adam(emb.parameters(), lr=0.1)  # <report>\n"
               f"else:\n    opt = torch.optim.SGD(emb.parameters(), lr=0.1)\nemb({INPUT}).sum().backward()\nopt.step()\n")


@shape("parameter groups (`[{\"params\": ...}]`)", "1", codes={"SPL401"})
def optimizer_param_groups(v):
    return _adam(v, "torch.optim.Adam([{{'params': {params}, 'lr': 0.1}}])")


@shape("parameters materialised as a list", "1", codes={"SPL401"})
def optimizer_param_list(v):
    return one(
        f"emb = {v.src}\nparams = list(emb.parameters())\nopt = torch.optim.Adam(params, lr=0.1)  # <report>\n"
        f"emb({INPUT}).sum().backward()\nopt.step()\n")


@shape("`named_parameters()` filtered by a comprehension", "1", codes={"SPL401"})
def optimizer_named_filter(v):
    return _adam(v, "torch.optim.Adam({params}, lr=0.1)",
                 params="[p for n, p in emb.named_parameters() if 'weight' in n]")


@shape("optimizer built by a helper in another module", "4", codes={"SPL401"})
def optimizer_helper_module(v):
    return {"optim_utils.py": "def make_optimizer(model, name='adam'):\n    if name == 'adam':\n"
                              "        return torch.optim.Adam(model.parameters(), lr=0.1)  # <report>\n"
                              "    return torch.optim.SGD(model.parameters(), lr=0.1)\n",
            ENTRY: f"from optim_utils import make_optimizer\n\nemb = {v.src}\nopt = make_optimizer(emb)\n"
                   f"emb({INPUT}).sum().backward()\nopt.step()\n"}


@shape("training loop over epochs with `zero_grad`", "4", codes={"SPL401"})
def optimizer_training_loop(v):
    return one(f"emb = {v.src}\nopt = torch.optim.Adam(emb.parameters(), lr=0.1)  # <report>\n"
               f"for epoch in range(2):\n    opt.zero_grad()\n    loss = emb({INPUT}).sum()\n    loss.backward()\n"
               f"    opt.step()\n")


@shape("trainer class holding model and optimizer", "3", codes={"SPL401"})
def optimizer_trainer_class(v):
    return one(f"class Trainer:\n    def __init__(self, model):\n        self.model = model\n"
               f"        self.opt = torch.optim.Adam(model.parameters(), lr=0.1)  # <report>\n\n"
               f"    def step(self, x):\n        self.opt.zero_grad()\n        self.model(x).sum().backward()\n"
               f"        self.opt.step()\n\n\nTrainer({v.src}).step({INPUT})\n")


def _clip(v, clip, head="", params="emb.parameters()"):
    return one(f"{head}emb = {v.src}\nopt = torch.optim.SGD(emb.parameters(), lr=0.1)\n"
               f"emb({INPUT}).sum().backward()\n{clip.format(params=params)}  # <report>\nopt.step()\n")


@shape("clipping over `optimizer.param_groups[0][\"params\"]`", "1", codes={"SPL301"})
def clip_param_groups(v):
    return _clip(v, "torch.nn.utils.clip_grad_norm_({params}, 1.0)", params="opt.param_groups[0]['params']")


@shape("clipping over the parameters flattened from `optimizer.param_groups`", "1", codes={"SPL301"})
def clip_flattened_groups(v):
    return _clip(v, "torch.nn.utils.clip_grad_norm_({params}, 1.0)",
                 params="[p for g in opt.param_groups for p in g['params']]")


@shape("clipping over a filtered parameter list", "1", codes={"SPL301"})
def clip_filtered(v):
    return _clip(v, "torch.nn.utils.clip_grad_norm_({params}, 1.0)",
                 params="[p for p in emb.parameters() if p.requires_grad]")


@shape("`from torch.nn.utils import clip_grad_norm_ as clip`", "2", codes={"SPL301"})
def clip_import_as(v):
    return _clip(v, "clip({params}, 1.0)", head="from torch.nn.utils import clip_grad_norm_ as clip\n\n")


@shape("clipping in a helper in another module", "4", codes={"SPL301"})
def clip_helper_module(v):
    return {"train_utils.py": "def clip(model, max_norm=1.0):\n"
                              "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # <report>\n",
            ENTRY: f"from train_utils import clip\n\nemb = {v.src}\nopt = torch.optim.SGD(emb.parameters(), lr=0.1)\n"
                   f"emb({INPUT}).sum().backward()\nclip(emb)\nopt.step()\n"}


@shape("clipping in a loop over a list of a dense and another optimizer", "2", codes={"SPL301"})
def clip_optimizer_list(v):
    return one(f"emb = {v.src}\nhead = torch.nn.Linear(3, 1)\n"
               f"optimizers = [torch.optim.SGD(head.parameters(), lr=0.1), torch.optim.SGD(emb.parameters(), lr=0.1)]\n"
               f"emb({INPUT}).sum().backward()\nfor opt in optimizers:\n    for group in opt.param_groups:\n"
               f"        torch.nn.utils.clip_grad_norm_(group['params'], 1.0)  # <report>\n    opt.step()\n")


@shape("clipping in a training loop", "4", codes={"SPL301"})
def clip_training_loop(v):
    return one(f"emb = {v.src}\nopt = torch.optim.SGD(emb.parameters(), lr=0.1)\nfor epoch in range(2):\n"
               f"    opt.zero_grad()\n    emb({INPUT}).sum().backward()\n"
               f"    torch.nn.utils.clip_grad_norm_(emb.parameters(), 1.0)  # <report>\n    opt.step()\n")


@shape("clipping after the `yield` of a `@contextmanager` step", "4", codes={"SPL301"})
def clip_context_manager(v):
    return one(f"import contextlib\n\n\n@contextlib.contextmanager\ndef clipped_step(model):\n    yield model\n"
               f"    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # <report>\n\n\n"
               f"emb = {v.src}\nwith clipped_step(emb) as m:\n    m({INPUT}).sum().backward()\n")


@shape("clipping in the wrapper a decorator factory puts around the step", "2", codes={"SPL301"})
def clip_decorator_factory(v):
    return one(f"import functools\n\n\ndef clipped(max_norm):\n    def decorate(step):\n"
               f"        @functools.wraps(step)\n        def wrapper(model, *args):\n"
               f"            out = step(model, *args)\n"
               f"            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # <report>\n"
               f"            return out\n        return wrapper\n    return decorate\n\n\n"
               f"@clipped(1.0)\ndef train_step(model, x):\n    model(x).sum().backward()\n\n\n"
               f"train_step({v.src}, {INPUT})\n")


@shape("clipping by a helper each element of a list comprehension is given", "1", codes={"SPL301"})
def clip_comprehension_helper(v):
    return one(f"def clip(module):\n"
               f"    return torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)  # <report>\n\n\n"
               f"emb = {v.src}\nhead = torch.nn.Linear(4, 1)\nhead(emb({INPUT})).sum().backward()\n"
               f"norms = [clip(m) for m in (head, emb)]\n")


@shape("clipping in the `finally` around a `@contextmanager`'s `yield`", "4", codes={"SPL301"})
def clip_context_manager_finally(v):
    return one(f"import contextlib\n\n\n@contextlib.contextmanager\ndef clipped_step(model):\n    try:\n"
               f"        yield\n    finally:\n"
               f"        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # <report>\n\n\n"
               f"emb = {v.src}\nwith clipped_step(emb):\n    emb({INPUT}).sum().backward()\n")


@shape("clipping each parameter, skipping unused ones with `continue`", "2", codes={"SPL301"})
def clip_each_skipping(v):
    return one(f"emb = {v.src}\nhead = torch.nn.Linear(4, 1)\nmodel = torch.nn.ModuleDict({{'emb': emb, 'head': head}})\n"
               f"emb({INPUT}).sum().backward()\nfor name, p in model.named_parameters():\n"
               f"    if p.grad is None:\n        continue\n"
               f"    torch.nn.utils.clip_grad_norm_([p], 1.0)  # <report>\n")


@shape("clipping the submodules that `model.modules()` yields of a type", "3", codes={"SPL301"})
def clip_modules_of_type(v):
    return one(f"model = torch.nn.Sequential({v.src}, torch.nn.Linear(4, 1))\n"
               f"model({INPUT}).sum().backward()\nfor m in model.modules():\n"
               f"    if isinstance(m, torch.nn.Embedding):\n"
               f"        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)  # <report>\n")
