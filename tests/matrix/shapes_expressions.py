"""Shapes that carry the value through an expression (point 1 of issue 18): containers,
comprehensions, generators, conditionals, comparisons, f-strings, await."""
from .shape import one, shape

PARTS_X = "parts['x']"


@shape("list element", "1")
def list_index(v):
    return one(f"items = [0, {v.src}]\n{v.sink('items[1]')}\n")


@shape("negative index of a list", "1")
def list_negative_index(v):
    return one(f"items = [0, {v.src}]\n{v.sink('items[-1]')}\n")


@shape("slice of a tuple", "1")
def tuple_slice(v):
    return one(f"items = (0, {v.src}, 2)\nrest = items[1:]\n{v.sink('rest[0]')}\n")


@shape("dict value", "1")
def dict_value(v):
    return one(f"parts = {{'x': {v.src}, 'n': 3}}\n{v.sink(PARTS_X)}\n")


@shape("dict value through `.get`", "1")
def dict_get(v):
    return one(f"parts = {{'x': {v.src}}}\nx = parts.get('x')\n{v.sink('x')}\n")


@shape("list built by `.append`", "1")
def list_append(v):
    return one(f"items = []\nitems.append({v.src})\n{v.sink('items[0]')}\n")


@shape("dict filled by item assignment", "1")
def dict_store(v):
    return one(f"parts = {{}}\nparts['x'] = {v.src}\n{v.sink(PARTS_X)}\n")


@shape("starred element in a list display", "1")
def starred_display(v):
    return one(f"items = [*[{v.src}], 0]\n{v.sink('items[0]')}\n")


@shape("list comprehension", "1")
def list_comprehension(v):
    return one(f"items = [t for t in [{v.src}]]\n{v.sink('items[0]')}\n")


@shape("dict comprehension", "1")
def dict_comprehension(v):
    return one(f"parts = {{k: t for k, t in [('x', {v.src})]}}\n{v.sink(PARTS_X)}\n")


@shape("`next` of a generator expression", "1")
def generator_expression(v):
    return one(f"x = next(t for t in [{v.src}])\n{v.sink('x')}\n")


@shape("generator function: iterating it gives what it yields", "1")
def generator_yield(v):
    return one(f"def values():\n    yield {v.src}\n\n\nfor x in values():\n{v.sink('x', 4)}\n")


@shape("`next` of a generator function", "1")
def generator_next(v):
    return one(f"def values():\n    yield {v.src}\n\n\nx = next(values())\n{v.sink('x')}\n")


@shape("conditional expression on a known comparison", "1")
def conditional(v):
    return one(f"mode = 'train'\nx = {v.src} if mode == 'train' else None\n{v.sink('x')}\n")


@shape("conditional on `name.lower() == ...`", "1")
def conditional_lower(v):
    return one(f"name = 'Train'\nx = {v.src} if name.lower() == 'train' else None\n{v.sink('x')}\n")


@shape("boolean `or`", "1")
def boolean_or(v):
    return one(f"cached = None\nx = cached or {v.src}\n{v.sink('x')}\n")


@shape("if statement on a known flag", "1")
def if_flag(v):
    return one(f"use_cache = False\nif use_cache:\n    x = None\nelse:\n    x = {v.src}\n{v.sink('x')}\n")


@shape("f-string key", "1")
def fstring_key(v):
    return one(f"layers = {{'layer_0': {v.src}}}\ni = 0\nx = layers[f'layer_{{i}}']\n{v.sink('x')}\n")


@shape("`await` of a coroutine", "1")
def await_coroutine(v):
    return one(f"import asyncio\n\n\nasync def make():\n    return {v.src}\n\n\nasync def main():\n"
               f"    x = await make()\n{v.sink('x', 4)}\n\n\nasyncio.run(main())\n")


@shape("lambda returning the value", "1")
def lambda_return(v):
    return one(f"make = lambda: {v.src}\nx = make()\n{v.sink('x')}\n")


@shape("conditional expression whose other branch (never taken) holds the other side's value", "1")
def conditional_other_branch(v):
    return one(f"mode = 'train'\nx = {v.src} if mode == 'train' else {v.other}\n{v.sink('x')}\n")


@shape("if statement on a known flag, the untaken branch holding the other side's value", "1")
def if_other_branch(v):
    return one(f"use_cache = False\nif use_cache:\n    x = {v.other}\nelse:\n    x = {v.src}\n{v.sink('x')}\n")


@shape("rebinding: the other side's value first, then the value", "2")
def rebinding(v):
    return one(f"x = {v.other}\nx = {v.src}\n{v.sink('x')}\n")
