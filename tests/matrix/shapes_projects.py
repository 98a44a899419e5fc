"""Shapes written as small projects: the hazard's source or its sink sits in a module other
than the entry script (helpers, base classes, mixins, registries, configs in their own files)."""
from .shape import ENTRY, shape


@shape("helper in another module holds the sink", "4")
def helper_module_sink(v):
    return {"helpers.py": f"def use(x):\n{v.sink('x', 4)}\n",
            ENTRY: f"from helpers import use\n\nuse({v.src})\n"}


@shape("factory in another module", "4")
def helper_module_source(v):
    return {"factory.py": f"def make():\n    return {v.src}\n",
            ENTRY: f"from factory import make\n\nx = make()\n{v.sink('x')}\n"}


@shape("`import module as alias`", "2")
def import_as(v):
    return {"factory.py": f"def make():\n    return {v.src}\n",
            ENTRY: f"import factory as fc\n\nx = fc.make()\n{v.sink('x')}\n"}


@shape("`from module import name as alias`", "2")
def from_import_as(v):
    return {"factory.py": f"def make():\n    return {v.src}\n",
            ENTRY: f"from factory import make as build\n\nx = build()\n{v.sink('x')}\n"}


@shape("module-level value in a config module", "2")
def config_module_value(v):
    return {"config.py": f"VALUE = {v.src}\n",
            ENTRY: f"from config import VALUE\n\n{v.sink('VALUE')}\n"}


@shape("config dict in its own module", "1")
def config_module_dict(v):
    return {"config.py": f"CONFIG = {{'value': {v.src}, 'lr': 0.1}}\n",
            ENTRY: "from config import CONFIG\n\n" + v.sink("CONFIG['value']") + "\n"}


@shape("package re-export (`from .factory import make` in `__init__`)", "2")
def package_reexport(v):
    return {"pkg/__init__.py": "from .factory import make\n",
            "pkg/factory.py": f"def make():\n    return {v.src}\n",
            ENTRY: f"from pkg import make\n\nx = make()\n{v.sink('x')}\n"}


@shape("sink in a package module reached by relative import", "4")
def package_relative_sink(v):
    return {"pkg/__init__.py": "from .steps import run\n",
            "pkg/steps.py": "from .ops import use\n\n\ndef run(x):\n    use(x)\n",
            "pkg/ops.py": f"def use(x):\n{v.sink('x', 4)}\n",
            ENTRY: f"from pkg import run\n\nrun({v.src})\n"}


@shape("registry module filled by decorators in another module", "4")
def registry_modules(v):
    return {"registry.py": "REGISTRY = {}\n\n\ndef register(name):\n    def add(fn):\n        REGISTRY[name] = fn\n"
                           "        return fn\n    return add\n",
            "builders.py": f"from registry import register\n\n\n@register('main')\ndef make():\n    return {v.src}\n",
            ENTRY: f"import builders\nfrom registry import REGISTRY\n\nx = REGISTRY['main']()\n{v.sink('x')}\n"}


@shape("base class in another module sets the attribute", "3")
def base_class_module(v):
    return {"base.py": f"class Base:\n    def __init__(self):\n        self.value = {v.src}\n",
            ENTRY: f"from base import Base\n\n\nclass Child(Base):\n    pass\n\n\nc = Child()\n{v.sink('c.value')}\n"}


@shape("mixin in another module provides the factory method", "3")
def mixin_module(v):
    return {"mixins.py": f"class BuildMixin:\n    def build(self):\n        return {v.src}\n",
            ENTRY: f"from mixins import BuildMixin\n\n\nclass Worker(BuildMixin):\n    pass\n\n\n"
                   f"x = Worker().build()\n{v.sink('x')}\n"}


@shape("base class in another module holds the sink method", "3")
def base_sink_module(v):
    return {"runner.py": f"class Runner:\n    def run(self, x):\n{v.sink('x', 8)}\n",
            ENTRY: f"from runner import Runner\n\n\nclass MyRunner(Runner):\n    pass\n\n\nMyRunner().run({v.src})\n"}


@shape("helper chain across two modules", "4")
def helper_chain_modules(v):
    return {"ops.py": f"def use(x):\n{v.sink('x', 4)}\n",
            "steps.py": "from ops import use\n\n\ndef run(x):\n    use(x)\n",
            ENTRY: f"from steps import run\n\nrun({v.src})\n"}


@shape("decorator defined in another module", "4")
def decorator_module(v):
    return {"decorators.py": "import functools\n\n\ndef traced(fn):\n    @functools.wraps(fn)\n"
                             "    def wrapper(*args, **kwargs):\n        return fn(*args, **kwargs)\n    return wrapper\n",
            ENTRY: f"from decorators import traced\n\n\n@traced\ndef make():\n    return {v.src}\n\n\n"
                   f"x = make()\n{v.sink('x')}\n"}


@shape("dataclass config in another module", "3")
def dataclass_config_module(v):
    return {"config.py": f"from dataclasses import dataclass, field\n\n\n@dataclass\nclass Config:\n"
                         f"    value: object = field(default_factory=lambda: {v.src})\n",
            ENTRY: f"from config import Config\n\ncfg = Config()\n{v.sink('cfg.value')}\n"}
