"""What the engine finds of the matrix today, recorded so that the matrix stays honest: a cell
listed here that the engine starts to report must leave the table, a cell not listed that it
stops reporting is a regression. Update it with the engine, never to make a test pass.

Each miss names its cause: the language form the engine does not follow yet (the first one
the value meets on its way from source to sink).
"""

CAUSES = {
    "global-nonlocal": "a `global`/`nonlocal` name written by a called function is not followed",
    "except-as": "an exception's arguments are not followed to `except ... as e: e.args[0]`",
    "defaults": "a parameter's default value is not bound when the call omits the argument",
    "star-args": "`*args`/`**kwargs` are not bound by Python's rules (at the call site or in the signature)",
    "closures": "a nested function does not see the facts of its enclosing function's names",
    "lambda": "calling a lambda does not give its body's value",
    "partial": "`functools.partial` objects are not followed to the function they bind",
    "indirect-calls": "a function reached through a dict, a list, a registry or an argument is not called",
    "generators": "iterating a generator (or `next` of it) does not give what it yields",
    "await": "`await` of a coroutine does not give its return value",
    "dataclass-defaults": "a dataclass field's default (`field(default_factory=...)` or a class-level "
                          "default) is not bound when the constructor omits it",
    "namespace": "`types.SimpleNamespace(...)` attributes are not bound",
    "attribute-chain": "an attribute chain through two plain (non-module) objects is not followed",
    "module-globals": "a module-level value imported from another module (`from config import VALUE`) "
                      "does not carry its facts",
    "embedding-subclass": "an `nn.Embedding` subclass passing `sparse=True` to `super().__init__` does not "
                          "make a sparse-gradient module",
    "module-containers": "indexing an `nn.ModuleList`/`nn.ModuleDict` does not give the module stored in it",
    "param-groups": "`optimizer.param_groups[0][\"params\"]` does not give the parameters the optimizer holds",
    "shape-into-callee": "a literal tensor shape does not flow into a callee's parameters (the SPL601 "
                         "indices), while uncoalesced/leaf/sparse facts do",
    "shape-in-init": "a literal tensor shape built in `__init__` is not kept on the instance (a constructor "
                     "whose source holds no rule token is not followed)",
    "shape-across-modules": "a literal tensor shape does not flow out of a function in another module",
    "autograd-function": "`ctx.save_for_backward` / `ctx.saved_tensors` do not carry facts into a custom "
                         "`autograd.Function`'s backward",
    "model-through-two-calls": "a sparse-gradient model passed through two calls across modules loses its "
                               "fact (a tensor's facts survive the same chain)",
}

# (shape, the hazards it is missed for, cause)
MISSED = (
)

# (shape, hazard, what the engine reports on the safe twin): none today.
FALSE_ALARMS = ()


def missed() -> dict:
    """Cell id -> cause."""
    out = {}
    for shape, codes, cause in MISSED:
        for code in codes.split():
            out[f"{code}-{shape}"] = cause
    return out
