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
    "module-globals": "a module-level value imported from another module (`from config import VALUE`) "
                      "does not carry its facts",
}

# (shape, the hazards it is missed for, cause)
MISSED = (
    ("global_write", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "global-nonlocal"),
    ("nonlocal_write", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "global-nonlocal"),
    ("except_as", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "except-as"),
    ("default_value", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "defaults"),
    ("flag_default", "SPL301 SPL401", "defaults"),
    ("star_args_call", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "star-args"),
    ("star_kwargs_call", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "star-args"),
    ("star_args_signature", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "star-args"),
    ("star_kwargs_signature", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "star-args"),
    ("flag_kwargs", "SPL301 SPL401", "star-args"),
    ("closure", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "closures"),
    ("closure_factory", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "closures"),
    ("lambda_return", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "lambda"),
    ("partial_binds_value", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "partial"),
    ("partial_factory", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "partial"),
    ("function_in_dict", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "indirect-calls"),
    ("function_in_list", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "indirect-calls"),
    ("registry_decorator", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "indirect-calls"),
    ("higher_order", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "indirect-calls"),
    ("registry_modules", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "indirect-calls"),
    ("model_registry_module", "SPL301 SPL401", "indirect-calls"),
    ("generator_yield", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "generators"),
    ("generator_next", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "generators"),
    ("await_coroutine", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "await"),
    ("dataclass_default_factory", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "dataclass-defaults"),
    ("dataclass_config_module", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "dataclass-defaults"),
    ("config_model_modules", "SPL301 SPL401", "dataclass-defaults"),
    ("namespace_attribute", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "namespace"),
    ("flag_namespace", "SPL301 SPL401", "namespace"),
    ("config_module_value", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "module-globals"),
    ("config_module_dict", "SPL001 SPL103 SPL201 SPL301 SPL401 SPL501 SPL601", "module-globals"),
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
