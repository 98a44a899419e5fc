"""Shapes that carry the value through a binding form (point 2 of issue 18) in one file."""
from .shape import one, shape


@shape("plain assignment", "2")
def direct(v):
    return one(f"x = {v.src}\n{v.sink('x')}\n")


@shape("tuple assignment of two values (`a, b = X(), Y()`)", "2")
def tuple_pair(v):
    return one(f"x, count = {v.src}, 3\n{v.sink('x')}\n")


@shape("tuple assignment, value second", "2")
def tuple_second(v):
    return one(f"count, x = 3, {v.src}\n{v.sink('x')}\n")


@shape("nested tuple target", "2")
def nested_tuple(v):
    return one(f"(a, (x, b)) = 0, ({v.src}, 1)\n{v.sink('x')}\n")


@shape("list target", "2")
def list_target(v):
    return one(f"[x, y] = [{v.src}, 0]\n{v.sink('x')}\n")


@shape("starred target", "2")
def starred_target(v):
    return one(f"*rest, x = 0, 1, {v.src}\n{v.sink('x')}\n")


@shape("starred target, value in the starred list", "2")
def starred_rest(v):
    return one(f"first, *rest = 0, {v.src}\n{v.sink('rest[0]')}\n")


@shape("chained assignment", "2")
def chained(v):
    return one(f"y = x = {v.src}\n{v.sink('y')}\n")


@shape("annotated assignment", "2")
def annotated(v):
    return one(f"x: object = {v.src}\n{v.sink('x')}\n")


@shape("augmented assignment of a list", "2")
def augmented_list(v):
    return one(f"items = []\nitems += [{v.src}]\n{v.sink('items[0]')}\n")


@shape("rebinding through another name", "2")
def alias(v):
    return one(f"x = {v.src}\ny = x\n{v.sink('y')}\n")


@shape("walrus", "1")
def walrus(v):
    return one(f"if (x := {v.src}) is not None:\n{v.sink('x', 4)}\n")


@shape("`with contextlib.nullcontext(x) as y`", "2")
def with_nullcontext(v):
    return one(f"import contextlib\nwith contextlib.nullcontext({v.src}) as x:\n{v.sink('x', 4)}\n")


@shape("for target", "2")
def for_target(v):
    return one(f"for x in [{v.src}]:\n{v.sink('x', 4)}\n")


@shape("for tuple target over enumerate", "2")
def for_enumerate(v):
    return one(f"for i, x in enumerate([{v.src}]):\n{v.sink('x', 4)}\n")


@shape("for tuple target over dict items", "2")
def for_items(v):
    return one(f"for name, x in {{'main': {v.src}}}.items():\n{v.sink('x', 4)}\n")


@shape("global written by a function", "2")
def global_write(v):
    return one(f"x = None\n\n\ndef init():\n    global x\n    x = {v.src}\n\n\ninit()\n{v.sink('x')}\n")


@shape("nonlocal written by a closure", "2")
def nonlocal_write(v):
    return one(f"def run():\n    x = None\n\n    def init():\n        nonlocal x\n        x = {v.src}\n\n"
               f"    init()\n{v.sink('x', 4)}\n\n\nrun()\n")


@shape("`except ... as` binding", "2")
def except_as(v):
    return one(f"class Carrier(Exception):\n    pass\n\n\ntry:\n    raise Carrier({v.src})\n"
               f"except Carrier as err:\n    x = err.args[0]\n{v.sink('x')}\n")


@shape("`del` of another name", "2")
def del_other(v):
    return one(f"x = {v.src}\ntmp = x\ndel tmp\n{v.sink('x')}\n")


@shape("code under `if __name__ == \"__main__\"` in main()", "2")
def main_function(v):
    return one(f"def main():\n    x = {v.src}\n{v.sink('x', 4)}\n\n\nif __name__ == \"__main__\":\n    main()\n")
