"""Python's binding forms carry facts: unpacking, `for` targets, comprehensions, `:=` and
`with ... as`; each with a look-alike whose value is safe, or not known, that stays silent."""
import textwrap

from sparselint.config import Settings
from sparselint.engine import check_text

HEAD = """
import contextlib
import torch
s = torch.sparse_coo_tensor(i, v, (3, 3))
c = s.coalesce()
"""


def codes(src):
    text = textwrap.dedent(HEAD).lstrip("\n") + textwrap.dedent(src).lstrip("\n")
    diags, _, _ = check_text(text, "t.py", Settings(select=("SPL001",)))
    return [d.line - 4 for d in diags]  # lines counted from the first line after HEAD


def test_tuple_list_and_starred_targets_bind_their_elements():
    assert codes("""
        x, n = s, 3
        x.values()
        (a, (y, b)) = 0, (s, 1)
        y.values()
        [p, q] = [c, s]
        q.values()
        *rest, z = c, c, s
        z.values()
    """) == [2, 4, 6, 8]


def test_unpacking_look_alikes_stay_silent():
    assert codes("""
        x, n = c, s
        x.values()
        *rest, z = s, s, c
        z.values()
        first, *more = c, s
        first.values()
        a, b = s
        a.values()
        u, w = pair
        u.values()
    """) == []


def test_a_returned_tuple_and_a_namedtuple_unpack():
    assert codes("""
        from typing import NamedTuple


        class Bundle(NamedTuple):
            value: object
            scale: float


        def make():
            return c, s


        a, b = make()
        a.values()
        b.values()
        x, k = Bundle(s, 1.0)
        x.values()
        y, m = Bundle(c, 1.0)
        y.values()
    """) == [15, 17]


def test_chained_assignment_rebinds_every_target():
    assert codes("""
        x = y = s
        y.values()
        x = y = c
        x.values()
    """) == [2]


def test_for_targets_bind_the_elements_of_a_known_list_enumerate_zip_and_items():
    assert codes("""
        for x in [s]:
            x.values()
        for j, y in enumerate([s]):
            y.values()
        for name, z in {"main": s}.items():
            z.values()
        for a, b in zip([c], [s]):
            b.values()
    """) == [2, 4, 6, 8]


def test_a_for_over_a_few_known_elements_runs_its_body_with_each():
    # the first iteration reads the uncoalesced one: torch raises there (the join of both
    # elements said nothing)
    assert codes("""
        for x in [c, s]:
            x.values()
    """) == [2]


def test_for_look_alikes_stay_silent():
    # one element safe and one not known, a list edited before the loop, a list passed to a
    # function that may edit it
    assert codes("""
        for x in [c, unknown]:
            x.values()
        for j, y in enumerate([c]):
            y.values()
        xs = [s]
        xs[0] = c
        for z in xs:
            z.values()
        ys = [s]
        ys.append(c)
        for w in ys:
            w.values()
        zs = [s]
        fill(zs)
        for t in zs:
            t.values()
        for a, b in zip([s], [c]):
            b.values()
    """) == []


def test_comprehension_targets_bind_the_iterated_elements():
    assert codes("""
        [t.values() for t in [s]]
        parts = {k: t for k, t in [("x", s)]}
        parts["x"].values()
        first = next(t for t in [s])
        first.values()
    """) == [1, 3, 5]


def test_comprehension_look_alikes_stay_silent():
    # a comprehension's target is its own name: the outer `t` (uncoalesced) is not it
    assert codes("""
        t = s
        [t.values() for t in [c]]
        parts = {k: u for k, u in [("x", c)]}
        parts["x"].values()
        first = next(u for u in [c, s])
        first.values()
        [w.values() for w in unknown]
    """) == []


def test_walrus_binds_its_target():
    assert codes("""
        if (x := s) is not None:
            x.values()
        if (y := c) is not None:
            y.values()
        z = s
        [(z := u) for u in [c]]
        z.values()
    """) == [2]


def test_with_nullcontext_binds_the_value_and_other_managers_leave_it_unknown():
    assert codes("""
        with contextlib.nullcontext(s) as x:
            x.values()
        with contextlib.nullcontext(c) as y:
            y.values()
        z = s
        with open("f") as z:
            z.values()
    """) == [2]


def test_unpacking_a_value_two_branches_disagree_on_is_unknown():
    # two sizes joined: their numbers are not known (this once stopped the analysis of the file)
    assert codes("""
        if flag:
            size = (3, 3)
        else:
            size = (2, 2)
        rows, cols = size
        for r, k in [size]:
            pass
        a, b = s, 1
        a.values()
    """) == [9]


def test_a_generator_or_a_list_another_function_can_edit_is_not_followed():
    # a generator held by a name is consumed by its first loop: the second loop never runs;
    # a list held by an attribute or a global can be edited by another method or function
    assert codes("""
        g = (t for t in [s])
        for x in g:
            pass
        for x in g:
            x.values()
        ITEMS = [s]


        def clear():
            ITEMS.clear()


        def use():
            for t in ITEMS:
                t.values()


        class Holder:
            def __init__(self):
                self.items = [s]

            def drop(self):
                self.items.pop()

            def use(self):
                for t in self.items:
                    t.values()
    """) == []


def test_a_list_built_by_followed_edits_unpacks_and_loops_over_its_elements():
    # one representation of a list: what `append`, `+=` and item stores leave in it is what
    # unpacking, a `for` and a comprehension bind
    assert codes("""
        items = [c]
        items.append(s)
        a, b = items
        b.values()
        for t in items[1:]:
            t.values()
        more = [c]
        more += [s]
        [t for t in more][-1].values()
        pair = [s, s]
        pair[1] = c
        for t in pair[:1]:
            t.values()
    """) == [4, 6, 9, 13]


def test_a_list_edited_in_a_way_not_followed_is_unknown_under_every_name():
    assert codes("""
        items = [c]
        alias = items
        items.insert(0, s)
        first, *_ = alias
        first.values()
        for t in alias:
            t.values()
        kept = [c, c]
        random.shuffle(kept)
        kept.append(s)
        x, y, z = kept
        z.values()
    """) == []
