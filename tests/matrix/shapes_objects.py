"""Shapes that carry the value through objects (point 3 of issue 18): attributes, classes,
properties, class/static methods, dataclasses, NamedTuples, getattr/setattr."""
from .shape import one, shape


@shape("class attribute", "3")
def class_attribute(v):
    return one(f"class Holder:\n    value = {v.src}\n\n\n{v.sink('Holder.value')}\n")


@shape("instance attribute set in `__init__`", "3")
def instance_attribute(v):
    return one(f"class Holder:\n    def __init__(self, value):\n        self.value = value\n\n\n"
               f"h = Holder({v.src})\n{v.sink('h.value')}\n")


@shape("attribute set from outside the class", "3")
def attribute_store(v):
    return one(f"class Holder:\n    pass\n\n\nh = Holder()\nh.value = {v.src}\n{v.sink('h.value')}\n")


@shape("method using `self.` attribute (sink in the method)", "3")
def method_sink(v):
    return one(f"class Runner:\n    def __init__(self, value):\n        self.value = value\n\n"
               f"    def run(self):\n{v.sink('self.value', 8)}\n\n\nRunner({v.src}).run()\n")


@shape("@property", "3")
def property_getter(v):
    return one(f"class Holder:\n    def __init__(self):\n        self._value = {v.src}\n\n    @property\n"
               f"    def value(self):\n        return self._value\n\n\nh = Holder()\n{v.sink('h.value')}\n")


@shape("method return", "3")
def method_return(v):
    return one(f"class Factory:\n    def build(self):\n        return {v.src}\n\n\nx = Factory().build()\n{v.sink('x')}\n")


@shape("bound method stored and called", "3")
def bound_method(v):
    return one(f"class Factory:\n    def build(self):\n        return {v.src}\n\n\nbuild = Factory().build\n"
               f"x = build()\n{v.sink('x')}\n")


@shape("@classmethod", "3")
def classmethod_return(v):
    return one(f"class Factory:\n    @classmethod\n    def build(cls):\n        return {v.src}\n\n\n"
               f"x = Factory.build()\n{v.sink('x')}\n")


@shape("@staticmethod", "3")
def staticmethod_return(v):
    return one(f"class Factory:\n    @staticmethod\n    def build():\n        return {v.src}\n\n\n"
               f"x = Factory.build()\n{v.sink('x')}\n")


@shape("a model's `forward` handing the value to its layer's `forward` (sink in the layer)", "3")
def layer_forward(v):
    return one(f"class Layer(nn.Module):\n    def forward(self, x):\n{v.sink('x', 8)}\n        return x\n\n\n"
               f"class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.layer = Layer()\n\n"
               f"    def forward(self, x):\n        return self.layer(x)\n\n\nNet()({v.src})\n")


@shape("a model's `forward` looping over the layers of an `nn.ModuleList` (sink in a layer)", "3")
def modulelist_layer_loop(v):
    return one(f"class Layer(nn.Module):\n    def forward(self, x):\n{v.sink('x', 8)}\n        return x\n\n\n"
               f"class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               f"        self.layers = nn.ModuleList(Layer() for _ in range(2))\n\n"
               f"    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x)\n        return x\n\n\n"
               f"Net()({v.src})\n")


@shape("ModuleList of project layers appended in a loop, run in a loop", "3")
def modulelist_appended_loop(v):
    return one(f"class Layer(nn.Module):\n    def forward(self, x):\n{v.sink('x', 8)}\n        return x\n\n\n"
               f"class Net(nn.Module):\n    def __init__(self, depth):\n        super().__init__()\n"
               f"        self.layers = nn.ModuleList()\n        for _ in range(depth):\n"
               f"            self.layers.append(Layer())\n\n"
               f"    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x)\n        return x\n\n\n"
               f"Net(2)({v.src})\n")


@shape("inherited method", "3")
def inherited_method(v):
    return one(f"class Base:\n    def build(self):\n        return {v.src}\n\n\nclass Child(Base):\n    pass\n\n\n"
               f"x = Child().build()\n{v.sink('x')}\n")


@shape("`super()` call to a base method", "3")
def super_method(v):
    return one(f"class Base:\n    def build(self):\n        return {v.src}\n\n\nclass Child(Base):\n"
               f"    def build(self):\n        return super().build()\n\n\nx = Child().build()\n{v.sink('x')}\n")


@shape("dataclass field", "3")
def dataclass_field(v):
    return one(f"from dataclasses import dataclass\n\n\n@dataclass\nclass Bundle:\n    value: object\n    scale: float = 1.0\n\n\n"
               f"b = Bundle({v.src})\n{v.sink('b.value')}\n")


@shape("dataclass `field(default_factory=...)`", "3")
def dataclass_default_factory(v):
    return one(f"from dataclasses import dataclass, field\n\n\n@dataclass\nclass Bundle:\n"
               f"    value: object = field(default_factory=lambda: {v.src})\n\n\nb = Bundle()\n{v.sink('b.value')}\n")


@shape("NamedTuple field", "3")
def namedtuple_field(v):
    return one(f"from typing import NamedTuple\n\n\nclass Bundle(NamedTuple):\n    value: object\n    scale: float\n\n\n"
               f"b = Bundle({v.src}, 1.0)\n{v.sink('b.value')}\n")


@shape("NamedTuple unpacked", "3")
def namedtuple_unpack(v):
    return one(f"from typing import NamedTuple\n\n\nclass Bundle(NamedTuple):\n    value: object\n    scale: float\n\n\n"
               f"x, scale = Bundle({v.src}, 1.0)\n{v.sink('x')}\n")


@shape("`setattr`/`getattr` with literal names", "3")
def setattr_getattr(v):
    return one(f"class Holder:\n    pass\n\n\nh = Holder()\nsetattr(h, 'value', {v.src})\nx = getattr(h, 'value')\n{v.sink('x')}\n")


@shape("`types.SimpleNamespace` config object", "3")
def namespace_attribute(v):
    return one(f"from types import SimpleNamespace\n\ncfg = SimpleNamespace(value={v.src}, lr=0.1)\n{v.sink('cfg.value')}\n")


@shape("attribute chain through two objects", "3")
def attribute_chain(v):
    return one(f"class Inner:\n    def __init__(self):\n        self.value = {v.src}\n\n\nclass Outer:\n"
               f"    def __init__(self):\n        self.inner = Inner()\n\n\no = Outer()\n{v.sink('o.inner.value')}\n")


@shape("`hasattr` guard with a literal name", "3")
def hasattr_guard(v):
    return one(f"class Holder:\n    def __init__(self):\n        self.value = {v.src}\n\n\nh = Holder()\n"
               f"x = h.value if hasattr(h, 'value') else None\n{v.sink('x')}\n")


@shape("custom `autograd.Function`: `ctx.save_for_backward` / `ctx.saved_tensors` (sink in backward)", "3",
       codes={"SPL001", "SPL501", "SPL601"})
def autograd_function_saved(v):
    return one(f"class Carry(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, saved):\n"
               f"        ctx.save_for_backward(saved)\n        return x * 2\n\n    @staticmethod\n"
               f"    def backward(ctx, grad):\n        x = ctx.saved_tensors[0]\n{v.sink('x', 8)}\n"
               f"        return grad * 2, None\n\n\n"
               f"Carry.apply(torch.ones(2, requires_grad=True), {v.src}).sum().backward()\n")
