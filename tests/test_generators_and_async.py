"""Generators, coroutines and caught exceptions carry facts: what a generator function
yields reaches `for`, `next`, `list` and comprehensions over it; `await` of a coroutine of
the project gives what it returns; `except E as e` binds `e.args` to what the `try` body
raised. Each form is checked by running the CLI on a small program, with look-alikes (a
safe value, a join with one, a value that is not known) that stay silent.

A line ending in `# bad` is where SPL001 must be reported; every other line stays silent.
"""
import textwrap

import pytest

from conftest import run_cli

HEAD = """
import asyncio
import torch
s = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [2, 0, 2]]), torch.tensor([1.0, 2.0, 3.0]), (3, 3))
c = s.coalesce()
"""


def lint(src, tmp_path):
    text = textwrap.dedent(HEAD).lstrip("\n") + textwrap.dedent(src).lstrip("\n")
    path = tmp_path / "prog.py"
    path.write_text(text)
    run = run_cli("--no-cache", "--select", "SPL001", "--output-format", "concise", str(path))
    found = sorted({int(line.split(":")[1]) for line in run.stdout.splitlines() if ": SPL001 " in line})
    expected = [i for i, line in enumerate(text.splitlines(), 1) if line.rstrip().endswith("# bad")]
    return found, expected, run


def check(src, tmp_path):
    found, expected, run = lint(src, tmp_path)
    assert found == expected, run.stdout + run.stderr


GENERATORS = {
    "for over a call, its parameter bound": """
        def batches(adj, n):
            for _ in range(n):
                yield adj


        for x in batches(s, 3):
            x.indices()  # bad
        for x in batches(c, 3):
            x.indices()
    """,
    "next of a call, and of a name holding the generator or its iterator": """
        def values():
            yield s


        next(values()).indices()  # bad
        it = values()
        next(it).indices()  # bad
        more = iter(values())
        next(more).indices()  # bad
        next(more, c).indices()
    """,
    "list, enumerate, comprehension and generator expression over it": """
        def values():
            yield s


        for x in list(values()):
            x.indices()  # bad
        for i, x in enumerate(values()):
            x.indices()  # bad
        for x in [t for t in values() if t is not None]:
            x.indices()  # bad
        for x in (t for t in values()):
            x.indices()  # bad
        list(values())[0].indices()  # bad
    """,
    "yield from a known iterable or another generator": """
        def inner():
            yield s


        def outer():
            yield from inner()
            yield from [s, s]


        for x in outer():
            x.indices()  # bad
    """,
    "a generator that yields a coalesced and an uncoalesced tensor gives their join": """
        def mixed():
            yield c
            yield from []
            yield s


        next(mixed()).indices()
        list(mixed())[0].indices()


        def unknown(items):
            yield from items
            yield s


        next(unknown([c] * 2)).indices()
    """,
    "a generator whose yield sits in a loop header is not read": """
        def header():
            while (yield c):
                pass
            yield s


        next(header()).indices()
    """,
    "a return in a generator is not what the call gives": """
        def gen():
            yield c
            return s


        for x in gen():
            x.indices()
        gen().indices()
    """,
}


@pytest.mark.parametrize("name", GENERATORS)
def test_generators(name, tmp_path):
    check(GENERATORS[name], tmp_path)


ASYNC = {
    "await of a coroutine of the project gives what it returns": """
        async def make(adj):
            return adj


        async def main():
            x = await make(s)
            x.indices()  # bad
            y = await make(c)
            y.indices()


        asyncio.run(main())
    """,
    "asyncio.run gives what the coroutine returns": """
        async def make():
            return s


        asyncio.run(make()).indices()  # bad
    """,
    "asyncio.run of a coroutine given a value runs its body": """
        async def main(adj):
            adj.indices()  # bad


        asyncio.run(main(s))
    """,
    "a coroutine that is not awaited is not its value": """
        async def make():
            return s


        async def main():
            x = make()
            x.indices()


        asyncio.run(main())
    """,
}


@pytest.mark.parametrize("name", ASYNC)
def test_await(name, tmp_path):
    check(ASYNC[name], tmp_path)


EXCEPTIONS = {
    "a builtin exception's args": """
        try:
            raise ValueError(s)
        except ValueError as e:
            e.args[0].indices()  # bad
        try:
            raise ValueError(c)
        except ValueError as e:
            e.args[0].indices()
    """,
    "a class of the file, a subclass, a tuple of handlers": """
        class Carrier(Exception):
            pass


        class Sub(Carrier):
            pass


        try:
            raise Sub(torch.zeros(2), s)
        except Carrier as err:
            x = err.args[1]
        x.indices()  # bad
        try:
            raise Carrier(s)
        except (KeyError, Carrier) as err:
            held = err.args
            held[0].indices()  # bad
    """,
    "a class whose __init__ passes on to a builtin exception, or not": """
        class Keeps(Exception):
            def __init__(self, adj):
                super().__init__(adj)
                self.adj = adj


        class Passes(Exception):
            def __init__(self, adj):
                super().__init__(adj.coalesce())


        class Stores(Exception):
            def __init__(self, adj):
                self.adj = adj


        class Deeper(Keeps):
            pass


        try:
            raise Keeps(s)
        except Keeps as e:
            e.args[0].indices()  # bad
            e.adj.indices()  # bad
        try:
            raise Passes(s)
        except Passes as e:
            e.args[0].indices()
        try:
            raise Stores(s)
        except Stores as e:
            e.args[0].indices()  # bad
        try:
            raise Deeper(s)
        except Keeps as e:
            e.args[0].indices()  # bad
    """,
    "the handler the exception reaches first": """
        try:
            raise KeyError(s)
        except LookupError as e:
            e.args[0].indices()  # bad
        except KeyError as e:
            e.args[0].indices()
    """,
    "two raises give their join": """
        def check(flag):
            try:
                if flag:
                    raise ValueError(s)
                raise ValueError(c)
            except ValueError as e:
                e.args[0].indices()
    """,
    "other code in the try body may raise the same class": """
        class Carrier(Exception):
            pass


        def helper():
            raise Carrier(c)


        try:
            helper()
            raise Carrier(s)
        except Carrier as err:
            err.args[0].indices()
        try:
            total = [1][2]
            raise IndexError(s)
        except IndexError as e:
            x = e.args[0]
            if isinstance(x, torch.Tensor):
                x.indices()
    """,
    "a call in the raise statement may raise first": """
        class Carrier(Exception):
            pass


        def pick():
            raise Carrier(c)


        try:
            raise Carrier(s, pick())
        except Carrier as err:
            err.args[0].indices()
    """,
    "an exception whose class or arguments are not known": """
        def make():
            return ValueError(c)


        class Custom(Exception):
            def __init__(self, adj):
                super().__init__(adj.coalesce())


        try:
            raise make()
        except ValueError as e:
            e.args[0].indices()
        try:
            raise Custom(s)
        except Custom as e:
            e.args[0].indices()
        from json import JSONDecodeError
        try:
            raise JSONDecodeError(s, "doc", 0)
        except ValueError as e:
            x = e.args[0]
            if isinstance(x, torch.Tensor):
                x.indices()
    """,
}


@pytest.mark.parametrize("name", EXCEPTIONS)
def test_except_as(name, tmp_path):
    check(EXCEPTIONS[name], tmp_path)
