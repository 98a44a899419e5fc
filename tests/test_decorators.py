"""A call of a decorated function runs the body as written only through decorators that keep
the call (sparselint/analysis/decorators.py); any other decorator makes the call unknown, so
what the caller passes is not taken into the body."""
import textwrap

BODY = '''
def degree(adj):
    return torch.bincount(adj.indices()[0], minlength=adj.shape[0])


adj = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [1, 0, 0]]), torch.ones(3), (2, 2))
print(degree(adj))
'''


def lint(cli, tmp_path, files: dict):
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return cli("--no-cache", "--output-format", "concise", str(tmp_path / "main.py"), cwd=tmp_path)


def codes(result) -> list:
    return [line.split(": ")[1].split()[0] for line in result.stdout.splitlines() if ": SPL" in line]


def test_a_decorator_of_an_unknown_library_makes_the_call_unknown(cli, tmp_path):
    r = lint(cli, tmp_path, {"main.py": "import torch\nfrom mylib import mystery\n\n\n@mystery" + BODY})
    assert r.returncode == 0 and codes(r) == [], r.stdout


def test_a_class_used_as_decorator_makes_the_call_unknown(cli, tmp_path):
    text = "import torch\n\n\nclass Traced:\n    def __init__(self, fn):\n        self.fn = fn\n\n" \
           "    def __call__(self, adj):\n        return self.fn(adj.coalesce())\n\n\n@Traced" + BODY
    assert codes(lint(cli, tmp_path, {"main.py": text})) == []


def test_known_decorators_keep_the_call(cli, tmp_path):
    for deco in ("@torch.no_grad()", "@functools.lru_cache(maxsize=None)", "@torch.compile"):
        r = lint(cli, tmp_path, {"main.py": f"import functools\nimport torch\n\n\n{deco}" + BODY})
        assert codes(r) == ["SPL001"], (deco, r.stdout)


def test_a_registry_decorator_from_another_module_keeps_the_call(cli, tmp_path):
    registry = '''
    REGISTRY = {}


    def register(name):
        def add(fn):
            REGISTRY[name] = fn
            return fn
        return add
    '''
    r = lint(cli, tmp_path, {"registry.py": registry,
                             "main.py": "import torch\nfrom registry import register\n\n\n@register('deg')" + BODY})
    assert codes(r) == ["SPL001"], r.stdout


def test_a_passthrough_wrapper_from_another_module_keeps_the_call_and_one_that_changes_it_does_not(cli, tmp_path):
    decorators = '''
    import functools


    def timed(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)
        return wrapper


    def coalesced(fn):
        @functools.wraps(fn)
        def wrapper(adj):
            return fn(adj.coalesce())
        return wrapper
    '''
    for deco, expected in (("timed", ["SPL001"]), ("coalesced", [])):
        r = lint(cli, tmp_path, {"decorators.py": decorators,
                                 "main.py": f"import torch\nimport decorators\n\n\n@decorators.{deco}" + BODY})
        assert codes(r) == expected, (deco, r.stdout)
