"""Shapes that carry the value through a call bound by Python's rules (point 4 of issue 18):
returns, parameters, keywords, `*args`/`**kwargs`, closures, decorators, partial, registries."""
from .shape import one, shape


@shape("function return", "4")
def function_return(v):
    return one(f"def make():\n    return {v.src}\n\n\nx = make()\n{v.sink('x')}\n")


@shape("function parameter (sink in the callee)", "4")
def function_param(v):
    return one(f"def use(x):\n{v.sink('x', 4)}\n\n\nuse({v.src})\n")


@shape("keyword argument", "4")
def keyword_arg(v):
    return one(f"def use(scale=1.0, x=None):\n{v.sink('x', 4)}\n\n\nuse(x={v.src})\n")


@shape("keyword-only parameter", "4")
def keyword_only(v):
    return one(f"def use(*, x):\n{v.sink('x', 4)}\n\n\nuse(x={v.src})\n")


@shape("default argument value", "4")
def default_value(v):
    return one(f"def use(scale, x={v.src}):\n{v.sink('x', 4)}\n\n\nuse(1.0)\n")


@shape("`*args` at the call site", "4")
def star_args_call(v):
    return one(f"def use(scale, x):\n{v.sink('x', 4)}\n\n\nargs = (1.0, {v.src})\nuse(*args)\n")


@shape("`**kwargs` at the call site", "4")
def star_kwargs_call(v):
    return one(f"def use(scale, x):\n{v.sink('x', 4)}\n\n\noptions = {{'x': {v.src}}}\nuse(1.0, **options)\n")


@shape("`*args` in the signature", "4")
def star_args_signature(v):
    return one(f"def use(*values):\n    x = values[0]\n{v.sink('x', 4)}\n\n\nuse({v.src})\n")


@shape("`**kwargs` in the signature", "4")
def star_kwargs_signature(v):
    return one(f"def use(**options):\n    x = options['x']\n{v.sink('x', 4)}\n\n\nuse(x={v.src})\n")


@shape("value returned through two helpers", "4")
def return_chain(v):
    return one(f"def make():\n    return {v.src}\n\n\ndef build():\n    return make()\n\n\n"
               f"x = build()\n{v.sink('x')}\n")


@shape("tuple returned and unpacked", "4")
def return_tuple(v):
    return one(f"def make():\n    return 3, {v.src}\n\n\ncount, x = make()\n{v.sink('x')}\n")


@shape("closure reading an outer name", "4")
def closure(v):
    return one(f"def outer():\n    x = {v.src}\n\n    def inner():\n{v.sink('x', 8)}\n\n"
               f"    return inner\n\n\nouter()()\n")


@shape("factory returning a closure", "4")
def closure_factory(v):
    return one(f"def remember(value):\n    def get():\n        return value\n    return get\n\n\n"
               f"x = remember({v.src})()\n{v.sink('x')}\n")


@shape("project decorator with `functools.wraps`", "4")
def decorator_wraps(v):
    return one(f"import functools\n\n\ndef traced(fn):\n    @functools.wraps(fn)\n    def wrapper(*args, **kwargs):\n"
               f"        return fn(*args, **kwargs)\n    return wrapper\n\n\n@traced\ndef make():\n"
               f"    return {v.src}\n\n\nx = make()\n{v.sink('x')}\n")


@shape("decorated sink function", "4")
def decorator_on_sink(v):
    return one(f"import functools\n\n\ndef traced(fn):\n    @functools.wraps(fn)\n    def wrapper(*args, **kwargs):\n"
               f"        return fn(*args, **kwargs)\n    return wrapper\n\n\n@traced\ndef use(x):\n"
               f"{v.sink('x', 4)}\n\n\nuse({v.src})\n")


@shape("`functools.partial` binding the value", "4")
def partial_binds_value(v):
    return one(f"import functools\n\n\ndef use(x, scale):\n{v.sink('x', 4)}\n\n\n"
               f"run = functools.partial(use, {v.src})\nrun(1.0)\n")


@shape("`functools.partial` of a factory", "4")
def partial_factory(v):
    return one(f"import functools\n\n\ndef make(scale):\n    return {v.src}\n\n\n"
               f"build = functools.partial(make, 1.0)\nx = build()\n{v.sink('x')}\n")


@shape("function reached through a dict", "4")
def function_in_dict(v):
    return one(f"def make():\n    return {v.src}\n\n\nbuilders = {{'main': make}}\nx = builders['main']()\n{v.sink('x')}\n")


@shape("function reached through a list", "4")
def function_in_list(v):
    return one(f"def make():\n    return {v.src}\n\n\nbuilders = [make]\nx = builders[0]()\n{v.sink('x')}\n")


@shape("registry filled by a decorator", "4")
def registry_decorator(v):
    return one(f"REGISTRY = {{}}\n\n\ndef register(name):\n    def add(fn):\n        REGISTRY[name] = fn\n"
               f"        return fn\n    return add\n\n\n@register('main')\ndef make():\n    return {v.src}\n\n\n"
               f"x = REGISTRY['main']()\n{v.sink('x')}\n")


@shape("function passed as an argument", "4")
def higher_order(v):
    return one(f"def make():\n    return {v.src}\n\n\ndef call(fn):\n    return fn()\n\n\nx = call(make)\n{v.sink('x')}\n")


@shape("factory decorated with `@torch.no_grad()`", "4", codes={"SPL001", "SPL501", "SPL601", "SPL301", "SPL401"})
def no_grad_decorator(v):
    return one(f"@torch.no_grad()\ndef make():\n    return {v.src}\n\n\nx = make()\n{v.sink('x')}\n")
