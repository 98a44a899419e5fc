"""Expressions over known values, seen through the findings they enable: conditional
expressions, `and`/`or`, comparisons, pure `str` methods, `in`, `hasattr`, `not`, f-strings,
and values followed through lists, tuples and dicts. Each form has a look-alike that must stay
silent: an undecided choice, an unknown operand, a value replaced in the container."""
import textwrap

from sparselint.config import Settings
from sparselint.engine import check_text


def codes(src, select=("ALL",)):
    diags, _, _ = check_text(textwrap.dedent(src).lstrip("\n"), "t.py", Settings(select=select))
    return [(d.line, d.code) for d in diags]


COO = "torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([1.0, 2.0]), (2, 2))"
ADAM_OVER = """
    import torch
    import torch.nn as nn
    {head}
    opt = torch.optim.Adam(emb.parameters(), lr=0.1)
"""


def adam(head):
    return codes(ADAM_OVER.format(head=textwrap.dedent(head).strip().replace("\n", "\n    ")))


def test_a_decided_conditional_expression_gives_its_branch():
    src = f"""
        import torch
        mode = {{}}
        s = {COO} if mode == "train" else {COO}.coalesce()
        s.indices()
    """
    assert codes(src.format('"train"')) == [(4, "SPL001")]
    assert codes(src.format('"eval"')) == []


def test_an_undecided_conditional_expression_joins_its_branches():
    # one branch sparse-grad, the other dense: no positive evidence
    assert adam("emb = nn.Embedding(10, 4, sparse=True) if flag else nn.Embedding(10, 4)") == []
    # both branches hazardous: the hazard holds whichever runs
    assert adam("emb = nn.Embedding(10, 4, sparse=True) if flag else nn.Embedding(20, 4, sparse=True)") \
        == [(4, "SPL401")]


def test_or_and_and_pick_the_operand_python_returns():
    assert adam("cached = None\nemb = cached or nn.Embedding(10, 4, sparse=True)") == [(5, "SPL401")]
    assert adam("use = True\nemb = use and nn.Embedding(10, 4, sparse=True)") == [(5, "SPL401")]
    # an operand whose truth is unknown: either may be the result
    assert adam("cached = load()\nemb = cached or nn.Embedding(10, 4, sparse=True)") == []
    assert adam("emb = nn.Embedding(10, 4) or nn.Embedding(10, 4, sparse=True)") == []


def test_pure_str_methods_decide_comparisons():
    src = """
        import torch
        import torch.nn as nn
        name = {}
        emb = nn.Embedding(10, 4, sparse=True)
        opt_cls = torch.optim.Adam if name.lower().strip() == "adam" else torch.optim.SparseAdam
        opt = opt_cls(emb.parameters(), lr=0.1)
    """
    assert codes(src.format('" Adam"')) == [(6, "SPL401")]
    assert codes(src.format('"SparseAdam"')) == []
    # a method of an unknown string decides nothing
    assert codes(src.format("args.optim")) == []


def test_flag_computed_by_a_comparison_reaches_the_constructor():
    assert adam('mode = "Sparse"\nemb = nn.Embedding(10, 4, sparse=mode.lower() == "sparse")') == [(5, "SPL401")]
    assert adam('mode = "Dense"\nemb = nn.Embedding(10, 4, sparse=mode.lower() == "sparse")') == []
    assert adam('emb = nn.Embedding(10, 4, sparse=mode.lower() == "sparse")') == []


def test_membership_and_not_decide_if_statements():
    src = """
        import torch
        mode = {}
        s = {}
        if not mode in ("train", "finetune"):
            s = s.coalesce()
        s.indices()
    """
    assert codes(src.format('"train"', COO)) == [(6, "SPL001")]
    assert codes(src.format('"eval"', COO)) == []
    assert codes(src.format("pick()", COO)) == []


def test_hasattr_is_true_only_where_the_attribute_is_known():
    src = f"""
        import torch
        class Holder:
            def __init__(self):
                self.value = {COO}
        h = Holder()
        x = h.value if hasattr(h, {{}}) else {COO}.coalesce()
        x.indices()
    """
    assert codes(src.format('"value"')) == [(7, "SPL001")]
    # never proved absent: the other branch is possible too
    assert codes(src.format('"other"')) == []


def test_list_and_tuple_elements_by_literal_index_and_slice():
    src = f"""
        import torch
        items = [0, {COO}, {COO}.coalesce()]
        {{}}.indices()
    """
    assert codes(src.format("items[1]")) == [(3, "SPL001")]
    assert codes(src.format("items[-2]")) == [(3, "SPL001")]
    assert codes(src.format("items[1:][0]")) == [(3, "SPL001")]
    # the look-alikes: the coalesced element, an index not known
    assert codes(src.format("items[-1]")) == []
    assert codes(src.format("items[1:][1]")) == []
    assert codes(src.format("items[i]")) == []


def test_lists_built_by_append_extend_and_starred_displays():
    src = """
        import torch
        items = []
        {}
        items[0].indices()
    """
    assert codes(src.format(f"items.append({COO})")) == [(4, "SPL001")]
    assert codes(src.format(f"items.extend([{COO}])")) == [(4, "SPL001")]
    assert codes(src.format(f"items += [{COO}]")) == [(4, "SPL001")]
    assert codes(src.format(f"items = [*[{COO}], 0]")) == [(4, "SPL001")]
    # the element replaced in place, the list reordered, or handed to code that may change it
    then = f"items.append({COO})\n        {{}}"
    assert codes(src.format(then.format("items[0] = items[0].coalesce()"))) == []
    assert codes(src.format(then.format(f"items.insert(0, {COO}.coalesce())"))) == []
    assert codes(src.format(then.format("random.shuffle(items)"))) == []
    assert codes(src.format(then.format("other = items\n        other[0] = other[0].coalesce()"))) == []
    assert codes(src.format(then.format("other = items\n        other.insert(0, other[0].coalesce())"))) == []


def test_dict_values_through_get():
    src = f"""
        import torch
        parts = {{{{"x": {COO}, "y": {COO}.coalesce()}}}}
        s = {{}}
        s.indices()
    """
    assert codes(src.format('parts.get("x")')) == [(4, "SPL001")]
    assert codes(src.format(f'parts.get("z", {COO})')) == [(4, "SPL001")]
    assert codes(src.format('parts.get("y")')) == []
    # a key the dict holds: the default is not what `get` gives
    assert codes(src.format(f'parts.get("y", {COO})')) == []


def test_f_string_keys_over_known_values():
    src = f"""
        import torch
        layers = {{{{"layer_0": {COO}, "layer_1": {COO}.coalesce()}}}}
        i = {{}}
        layers[f"layer_{{{{i}}}}"].indices()
    """
    assert codes(src.format("0")) == [(4, "SPL001")]
    assert codes(src.format("1")) == []
    assert codes(src.format("pick()")) == []


def test_a_module_level_list_is_not_trusted_inside_functions():
    # any function may change it in place before another one reads it
    assert codes(f"""
        import torch
        ITEMS = [{COO}]
        def fix():
            ITEMS[0] = ITEMS[0].coalesce()
        def use():
            ITEMS[0].indices()
    """) == []
    assert codes(f"""
        import torch
        ITEMS = [{COO}]
        ITEMS[0].indices()
    """) == [(3, "SPL001")]


def test_a_sequence_whose_length_two_paths_disagree_on_is_changed_safely():
    # two literal sizes joined: the elements are not known, and storing into it is no error
    assert codes("""
        import torch
        size = [3, 3] if flag else [4, 4, 4]
        size[0] = 5
        size += [1]
        s = torch.sparse_coo_tensor(i, v, size[0:2])
    """) == []


def test_getattr_and_setattr_with_literal_names():
    src = f"""
        import torch
        class Holder:
            pass
        h = Holder()
        setattr(h, "value", {COO})
        {{}}
        getattr(h, "value").indices()
    """
    assert codes(src.format("")) == [(7, "SPL001")]
    # the attribute set again under a name not known: it may be this one
    assert codes(src.format("setattr(h, name, None)")) == []
    assert adam('emb = getattr(nn, "Embedding")(10, 4, sparse=True)') == [(4, "SPL401")]
    assert adam('emb = getattr(nn, "Embedding")(10, 4, sparse=False)') == []
