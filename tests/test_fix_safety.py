"""Where a safe fix's safety rests on code outside the line it edits: a gradient another
module may put into a graph, aliases of a gradient, and the arguments of the op."""
import textwrap

TRAIN = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from helper import backward_with_graph

    emb = nn.Embedding(4, 2, sparse=True)
    w = torch.ones(2, requires_grad=True)
    backward_with_graph((emb(torch.tensor([1, 1, 2])) * w).pow(2).sum())
    emb.weight.grad.data.mul_(0.5)
    """)


def _fix(cli, tmp_path, files: dict, target: str):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    r = cli("--no-cache", "--fix", str(tmp_path / target))
    return r, (tmp_path / target).read_text()


def test_a_backward_with_create_graph_in_an_imported_module_keeps_the_fix_unsafe(cli, tmp_path):
    helper = "def backward_with_graph(loss):\n    loss.backward(create_graph=True)\n"
    r, text = _fix(cli, tmp_path, {"helper.py": helper, "train.py": TRAIN}, "train.py")
    assert "SPL004" in r.stdout and r.returncode == 1
    assert text == TRAIN
    assert "1 hidden fix can be enabled with the `--unsafe-fixes` option" in r.stdout


def test_the_same_helper_without_a_graph_of_gradients_lets_the_fix_go_in(cli, tmp_path):
    helper = "def backward_with_graph(loss):\n    loss.backward()\n"
    r, text = _fix(cli, tmp_path, {"helper.py": helper, "train.py": TRAIN}, "train.py")
    assert "emb.weight.grad.mul_(0.5)\n" in text and ".data" not in text


def test_an_alias_of_the_gradient_saved_by_a_product_keeps_the_fix_unsafe(cli, tmp_path):
    src = textwrap.dedent("""\
        import torch
        import torch.nn as nn

        emb = nn.Embedding(4, 2, sparse=True)
        emb(torch.tensor([0, 2, 2])).sum().backward()
        scale = torch.tensor(0.5, requires_grad=True)
        g = emb.weight.grad
        penalty = (g * scale).to_dense().sum()
        emb.weight.grad.data.mul_(0.1)
        penalty.backward()
        """)
    r, text = _fix(cli, tmp_path, {"m.py": src}, "m.py")
    assert "SPL004" in r.stdout and text == src


def test_an_alias_only_displayed_lets_the_fix_go_in(cli, tmp_path):
    src = textwrap.dedent("""\
        import torch
        import torch.nn as nn

        emb = nn.Embedding(4, 2, sparse=True)
        emb(torch.tensor([0, 2, 2])).sum().backward()
        g = emb.weight.grad
        print(g.coalesce().to_dense().tolist(), g.is_sparse)
        emb.weight.grad.data.zero_()
        """)
    r, text = _fix(cli, tmp_path, {"m.py": src}, "m.py")
    assert "emb.weight.grad.zero_()\n" in text


def test_an_operand_that_requires_grad_keeps_the_fix_unsafe(cli, tmp_path):
    src = textwrap.dedent("""\
        import torch
        import torch.nn as nn

        emb = nn.Embedding(4, 2, sparse=True)
        log_lr = torch.tensor(-1.0, requires_grad=True)
        emb(torch.tensor([1, 3])).sum().backward()
        emb.weight.grad.data.mul_(log_lr.exp())
        """)
    r, text = _fix(cli, tmp_path, {"m.py": src}, "m.py")
    assert "SPL004" in r.stdout and text == src


def test_a_gradient_as_the_receiver_of_an_op_that_saves_it_keeps_the_fix_unsafe(cli, tmp_path):
    src = textwrap.dedent("""\
        import torch
        import torch.nn as nn

        emb = nn.Embedding(4, 3, sparse=True)
        emb(torch.tensor([0, 1, 1])).sum().backward()
        x = torch.tensor(2.0, requires_grad=True)
        out = emb.weight.grad.mul(x).to_dense().sum()
        emb.weight.grad.data.zero_()
        out.backward()
        """)
    r, text = _fix(cli, tmp_path, {"m.py": src}, "m.py")
    assert "SPL004" in r.stdout and text == src


MODELS = textwrap.dedent("""\
    import torch.nn as nn


    class Rec(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(6, 2, sparse=True)

        def forward(self, x):
            return self.emb(x).sum()

        def clear_sparse_grads(self):
            if self.emb.weight.grad is not None:
                self.emb.weight.grad.data.zero_()
    """)
CALLER = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from models import Rec

    rec = Rec()
    alpha = nn.Parameter(torch.tensor(2.0))
    rec(torch.tensor([0, 3])).backward()
    s = alpha * rec.emb.weight.grad
    rec.clear_sparse_grads()
    torch.sparse.sum(s).backward()
    """)


def test_a_gradient_of_self_keeps_the_fix_unsafe_for_callers_in_other_modules(cli, tmp_path):
    """A caller in another module may have saved the gradient for a backward of its own (here
    `alpha * rec.emb.weight.grad`): zeroing it in place would make that backward raise."""
    r, text = _fix(cli, tmp_path, {"models.py": MODELS, "main.py": CALLER}, "models.py")
    assert "SPL004" in r.stdout and text == MODELS
    assert "1 hidden fix can be enabled with the `--unsafe-fixes` option" in r.stdout


def test_a_gradient_of_a_parameter_keeps_the_fix_unsafe(cli, tmp_path):
    src = textwrap.dedent("""\
        import torch.nn as nn


        def zero_grads(model):
            for p in model.parameters():
                p.grad.data.zero_()


        emb = nn.Embedding(6, 2, sparse=True)
        emb(torch.tensor([0, 3])).sum().backward()
        zero_grads(emb)
        """)
    r, text = _fix(cli, tmp_path, {"train.py": src}, "train.py")
    assert "SPL004" in r.stdout and text == src


def test_a_gradient_of_a_model_built_here_lets_the_fix_go_in(cli, tmp_path):
    src = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        def train():
            model = nn.Embedding(6, 2, sparse=True)
            for step in range(2):
                model(torch.tensor([0, 3])).sum().backward()
                for p in model.parameters():
                    p.grad.data.zero_()


        train()
        """)
    r, text = _fix(cli, tmp_path, {"train.py": src}, "train.py")
    assert "p.grad.zero_()" in text and ".data" not in text, r.stdout
