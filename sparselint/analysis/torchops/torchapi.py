"""What the engine knows about torch's API: the tables facts are derived from.

Data only, so that a new source of facts is one line here, not a branch in the engine.
"""
from __future__ import annotations

import re

from ..evaluation.gradflags import DENSE

# Sparse constructors: qualified name -> (layout, position of the values argument).
SPARSE_CONSTRUCTORS = {
    "torch.sparse_coo_tensor": ("coo", 1),
    "torch.sparse_csr_tensor": ("csr", 2),
    "torch.sparse_csc_tensor": ("csc", 2),
    "torch.sparse_bsr_tensor": ("bsr", 2),
    "torch.sparse_bsc_tensor": ("bsc", 2),
    "torch.sparse_compressed_tensor": ("sparse", 2),
    "torch.sparse.FloatTensor": ("coo", 1),
    "torch.sparse.DoubleTensor": ("coo", 1),
}

# Factories that make a fresh strided tensor (a leaf when `requires_grad=True`).
DENSE_FACTORIES = frozenset(
    "torch." + n
    for n in (
        "tensor", "randn", "rand", "zeros", "ones", "empty", "full", "arange", "eye",
        "linspace", "logspace", "randint", "randperm", "normal",
    )
)
# `zeros_like(x)` and `empty_like(x)` have the layout of `x`; the others raise on a sparse `x`.
LIKE_FACTORIES = frozenset("torch." + n for n in ("zeros_like", "empty_like", "ones_like", "randn_like",
                                                   "rand_like", "full_like"))

PARAMETER = "torch.nn.Parameter"

EMBEDDINGS = {
    "torch.nn.Embedding": "Embedding",
    "torch.nn.EmbeddingBag": "EmbeddingBag",
    "torch.nn.Embedding.from_pretrained": "Embedding",
    "torch.nn.EmbeddingBag.from_pretrained": "EmbeddingBag",
}
# Where each keyword read of them sits among the positional arguments (torch 2.x signatures).
EMBEDDING_POSITIONS = {
    "torch.nn.Embedding": {"sparse": 6, "_freeze": 8},
    "torch.nn.EmbeddingBag": {"mode": 5, "sparse": 6},
    "torch.nn.Embedding.from_pretrained": {"freeze": 1, "sparse": 6},
    "torch.nn.EmbeddingBag.from_pretrained": {"freeze": 1, "mode": 5, "sparse": 6},
}
FUNCTIONAL_EMBEDDINGS = frozenset({"torch.nn.functional.embedding", "torch.nn.functional.embedding_bag"})

# Products whose first operand, when it is a sparse leaf, receives an uncoalesced sparse grad,
# and which save that operand for backward when the other operand requires grad.
# name -> (position of the sparse operand, position of the dense operand)
PRODUCTS = {
    "torch.sparse.mm": (0, 1),
    "torch.sparse.addmm": (1, 2),
    "torch.mm": (0, 1),
    "torch.matmul": (0, 1),
    "torch.spmm": (0, 1),
    "torch.smm": (0, 1),
    "torch.hspmm": (0, 1),
    "torch.mv": (0, 1),
    "torch.addmm": (1, 2),
    "torch.nn.functional.linear": (1, 0),
}
# Products with a sparse parameter whose backward gives it a dense (strided) grad.
DENSE_GRAD_PRODUCTS = frozenset({"torch.mm", "torch.matmul", "torch.mv", "torch.addmm",
                                 "torch.nn.functional.linear", "@", "sum"})
# Functions of a sparse leaf whose backward gives it an uncoalesced (False) or coalesced (True) grad.
GRAD_COALESCED_BY = {
    "torch.sparse.mm": False,
    "torch.sparse.addmm": False,
    "torch.sparse.softmax": False,
    "torch.sparse.log_softmax": False,
    "torch.sparse.sum": True,
}
# Functions whose backward saves their sparse operand to compute that operand's own grad
# (masking the grad to its pattern), so they save it whenever it requires grad, whatever
# the other operand does. Plain dense products (`torch.mm`, `@`, `F.linear`) and `x.sum()`
# give a dense grad and save nothing for it. Checked under torch 2.13.
SAVE_SPARSE_FOR_OWN_GRAD = frozenset({"torch.sparse.mm", "torch.sparse.addmm", "torch.sparse.softmax",
                                      "torch.sparse.log_softmax", "torch.sparse.sum", "to_dense"})
# Functions of sparse tensors that return a sparse COO tensor.
SPARSE_RESULT = frozenset({"torch.sparse.softmax", "torch.sparse.log_softmax"})

# Tensor methods.
CONVERSIONS = {
    "to_sparse": "coo",
    "to_sparse_coo": "coo",
    "to_sparse_csr": "csr",
    "to_sparse_csc": "csc",
    "to_sparse_bsr": "bsr",
    "to_sparse_bsc": "bsc",
}
LAYOUT_NAMES = {
    "torch.sparse_coo": "coo",
    "torch.sparse_csr": "csr",
    "torch.sparse_csc": "csc",
    "torch.sparse_bsr": "bsr",
    "torch.sparse_bsc": "bsc",
    "torch.strided": "strided",
}
# Methods that keep the layout and make a new node in the graph.
LAYOUT_PRESERVING = frozenset(
    {"clone", "mul", "div", "neg", "abs", "sign", "relu", "pow", "square", "sqrt", "t",
     "transpose", "permute", "float", "double", "half", "bfloat16", "to", "cpu", "cuda",
     "type_as", "contiguous"}
)
# Of these, the ones that keep the coalesced flag too.
COALESCE_PRESERVING = frozenset({"clone", "float", "double", "half", "bfloat16", "to", "cpu", "cuda", "type_as"})
# Of these, the ones that return `self` when nothing changes (so a leaf may stay a leaf).
MAYBE_SELF = frozenset({"float", "double", "half", "bfloat16", "to", "cpu", "cuda", "type_as", "contiguous"})
DETACHING = frozenset({"detach", "detach_"})
# Functions of one tensor applied to each element (`torch.sigmoid(w)`, `F.softplus(w)`,
# `w.exp()`): on a dense tensor, a dense tensor of its shape, in its graph.
DENSE_ELEMENTWISE = frozenset({
    "sigmoid", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "tanh", "relu", "relu6", "softplus",
    "clamp", "clip", "clamp_min", "clamp_max", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "erf",
    "erfc", "reciprocal", "rsqrt", "sqrt", "square", "abs", "neg", "negative", "sign", "sgn", "floor", "ceil",
    "round", "trunc", "frac", "gelu", "silu", "elu", "selu", "celu", "leaky_relu", "hardtanh", "hardsigmoid",
    "hardswish", "mish", "logsigmoid", "softsign", "tanhshrink", "dropout", "nan_to_num", "logit", "expit"})
DENSE_ELEMENTWISE_MODULES = ("torch.", "torch.nn.functional.", "torch.special.")
# Methods of a dense tensor that reduce it over some dimensions to one dense tensor (not the
# (values, indices) pair of `max(dim)`): in its graph as it is.
DENSE_REDUCTIONS = frozenset({"sum", "mean", "prod", "norm", "amax", "amin", "logsumexp", "std", "var", "nansum",
                              "nanmean", "cumsum", "cumprod", "softmax", "log_softmax"})
# Methods (and `torch.` functions) that reshape, select from or repeat a dense tensor: a
# dense tensor, in its graph (torch 2.13.0, 2.9.1).
DENSE_SHAPE_OPS = frozenset({"view", "reshape", "squeeze", "unsqueeze", "flatten", "unflatten", "expand", "expand_as",
                             "repeat", "narrow", "select", "index_select", "gather", "view_as", "reshape_as",
                             "movedim", "permute", "transpose", "roll", "flip", "tril", "triu", "masked_fill",
                             "repeat_interleave"})
# Methods whose result has the shape of the tensor they are called on.
SHAPE_KEEPING = frozenset({"coalesce", "to_dense", "clone", "detach", "float", "double", "half", "bfloat16",
                           "contiguous", "cpu", "requires_grad_", "relu", "abs", "neg", "sign", "sqrt", "square"})
# Products of two matrices, `(n, k) x (k, m) -> (n, m)`, as `@` is.
MATRIX_PRODUCTS = frozenset({"torch.sparse.mm", "torch.mm", "torch.spmm", "torch.smm"})
VALUE_ACCESSORS = frozenset({"values", "indices", "crow_indices", "col_indices", "ccol_indices", "row_indices"})
PRIVATE_ACCESSORS = frozenset({"_values", "_indices"})
# In-place methods that add entries to a sparse COO tensor, leaving it uncoalesced.
UNCOALESCING_UPDATES = frozenset({"add_", "sub_", "addcmul_", "addcdiv_"})

# Calls that run backward.
BACKWARD_FUNCTIONS = frozenset({"torch.autograd.backward", "torch.autograd.grad"})
# Positions of `retain_graph` and `create_graph` among the positional arguments of a backward
# call ("method": `loss.backward(gradient, retain_graph, create_graph)`).
BACKWARD_GRAPH_POSITIONS = {"method": (1, 2), "torch.autograd.backward": (2, 3), "torch.autograd.grad": (3, 4)}

# Custom autograd functions: `Fn.apply(...)` runs `forward(ctx, ...)`, and backward later runs
# `backward(ctx, ...)` with the same context object, which carries what forward saved.
AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
AUTOGRAD_CTX = "torch.autograd.function.FunctionCtx"

# Grad-mode context managers and decorators: qualified name -> grad enabled inside.
GRAD_MODES = {
    "torch.no_grad": False,
    "torch.inference_mode": False,
    "torch.enable_grad": True,
}
SET_GRAD_ENABLED = "torch.set_grad_enabled"

OPTIMIZER_PREFIX = "torch.optim."

# Where any source of a sparse fact shows in code (forms in `sparselint.tokens`), derived
# from the tables above. A file with none of these cannot hold a sparse tensor the engine
# knows about, so rules that need one skip it unparsed.
SPARSE_SOURCE_TOKENS = tuple(sorted(
    {name[len("torch."):] + "()" for name in SPARSE_CONSTRUCTORS}
    | {"to_sparse*()"}  # every conversion in CONVERSIONS starts with it
    | {"sparse=True"}  # nn.Embedding / EmbeddingBag / F.embedding
))
assert all(m.startswith("to_sparse") for m in CONVERSIONS)

CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict"})
# `itertools.chain(a, b)` and friends join parameter collections.
CHAINS = frozenset({"itertools.chain"})


# Where a standard layer's constructor takes `bias` (torch 2.13.0, 2.9.1): `bias=False`
# makes no bias parameter.
BIAS_POSITION = {"Linear": 2, "Bilinear": 3, "LazyLinear": 1, "Conv1d": 7, "Conv2d": 7, "Conv3d": 7, "LayerNorm": 3,
                 "MultiheadAttention": 3}
# `nn.MultiheadAttention` arguments that change which parameters it has: with none of them
# given, its projections are packed (`in_proj_weight`) and `add_bias_kv` adds none
ATTENTION_VARIANTS = {"add_bias_kv": 4, "kdim": 6, "vdim": 7}


# Recurrent layers (torch 2.13.0, 2.9.1): their parameters, named by layer and direction,
# from the keywords that shape them (positional arguments past the two sizes are not read:
# `nn.RNN` takes `nonlinearity` where the others take `bias`)
RECURRENT = {"RNN": {"num_layers": 1, "bias": True, "bidirectional": False},
             "GRU": {"num_layers": 1, "bias": True, "bidirectional": False},
             "LSTM": {"num_layers": 1, "bias": True, "bidirectional": False, "proj_size": 0}}


def recurrent_parts(given: dict):
    """The parameter names of a recurrent layer built with these keyword values (`given`
    holds every keyword of `RECURRENT`'s entry, known), in the order torch registers them."""
    names = []
    for layer in range(given["num_layers"]):
        for suffix in ("", "_reverse") if given["bidirectional"] else ("",):
            names += [f"weight_ih_l{layer}{suffix}", f"weight_hh_l{layer}{suffix}"]
            if given["bias"]:
                names += [f"bias_ih_l{layer}{suffix}", f"bias_hh_l{layer}{suffix}"]
            if given.get("proj_size"):
                names.append(f"weight_hr_l{layer}{suffix}")
    return tuple((n, DENSE) for n in names)


def parameter_rank(layer: str, name: str):
    """How many dimensions the parameter `name` of a standard layer has (None: not known)."""
    if layer in RECURRENT:
        return 2 if name.startswith("weight_") else 1 if name.startswith("bias_") else None
    return PARAMETER_RANKS.get(layer, {}).get(name)


def dense_layer_parts(qualified: str, bias=True):
    """Parameter names of a standard layer, where they are the usual two; `bias`: what its
    constructor was given for `bias` (True, False, or None when that is not known)."""
    if qualified.split(".")[-1] in ("Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d",
                                    "LayerNorm", "BatchNorm1d", "BatchNorm2d", "GroupNorm"):
        if bias is None:
            return None
        return (("weight", DENSE), ("bias", DENSE)) if bias else (("weight", DENSE),)
    if qualified.split(".")[-1] == "MultiheadAttention" and bias is not None:
        names = ("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias") if bias else (
            "in_proj_weight", "out_proj.weight")
        return tuple((n, DENSE) for n in names)
    return None


# How many dimensions each parameter of a standard layer has (torch 2.13.0, 2.9.1): what a
# weight-decay split by `p.ndim < 2` / `p.dim() == 1` reads of it.
PARAMETER_RANKS = {
    "Embedding": {"weight": 2}, "EmbeddingBag": {"weight": 2},
    "Linear": {"weight": 2, "bias": 1}, "Bilinear": {"weight": 3, "bias": 1},
    "Conv1d": {"weight": 3, "bias": 1}, "Conv2d": {"weight": 4, "bias": 1}, "Conv3d": {"weight": 5, "bias": 1},
    "LayerNorm": {"weight": 1, "bias": 1}, "BatchNorm1d": {"weight": 1, "bias": 1},
    "MultiheadAttention": {"in_proj_weight": 2, "in_proj_bias": 1},
    "BatchNorm2d": {"weight": 1, "bias": 1}, "GroupNorm": {"weight": 1, "bias": 1},
}

# Standard layers without parameters (torch 2.13.0, 2.9.1): a model made with them still has
# all its parameter names known.
PARAMETER_FREE = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Tanh", "Sigmoid", "Hardtanh",
    "Hardsigmoid", "Hardswish", "Softplus", "Softsign", "Tanhshrink", "LogSigmoid", "Softmax", "LogSoftmax",
    "GLU", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Identity", "Flatten", "Unflatten",
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
})

# Optimizers and what they do with sparse gradients. The name in the message is the one
# torch prints (AdamW reports itself as Adam).
REJECTS_SPARSE_GRADS = {
    "Adam": "Adam", "AdamW": "Adam", "RMSprop": "RMSprop", "Adadelta": "Adadelta",
    "Adamax": "Adamax", "NAdam": "NAdam", "RAdam": "RAdam", "ASGD": "ASGD", "Rprop": "Rprop",
    "Adafactor": "Adafactor",
}
# Optimizers that handle sparse gradients, except with `fused=True` (torch 2.13.0, 2.9.1).
FUSED_REJECTS_SPARSE_GRADS = {
    "SGD": "RuntimeError: `_fused_sgd` does not support sparse gradients",
    "Adagrad": "RuntimeError: `fused` does not support sparse grad or complex param",
}
WEIGHT_DECAY_WITH_SPARSE = {
    "SGD": "RuntimeError: add(sparse, dense) is not supported. Use add(dense, sparse) instead.",
    "Adagrad": "RuntimeError: weight_decay option is not compatible with sparse gradients",
}
# Optimizers over a sparse parameter tensor, and how they fail (SGD works).
SPARSE_PARAMETER_ERRORS = {
    "SparseAdam": ("construct", "ValueError: Sparse params at indices [...]: SparseAdam requires dense parameter tensors"),
    "Adagrad": ("construct", "RuntimeError: memory format option is only supported by strided tensors"),
    **{name: ("step", f"RuntimeError: {msg} does not support sparse gradients") for name, msg in REJECTS_SPARSE_GRADS.items()},
}
CLIP_FUNCTIONS = {
    "torch.nn.utils.clip_grad_norm_": "aten::linalg_vector_norm",
    "torch.nn.utils.clip_grad_norm": "aten::linalg_vector_norm",
    "torch.nn.utils.clip_grad_value_": "aten::clamp_min_",
    "torch.nn.utils.get_total_norm": "aten::linalg_vector_norm",
}
# `clip_grads_with_norm_(params, max_norm, total_norm)` only scales (`mul_`), which works on
# sparse gradients (torch 2.13.0, 2.9.1): not a clip function here.
# `torch.optim.X`, `optim.X`, `from torch.optim import X`, `getattr(torch.optim, name)`; not the
# base class (`isinstance(o, torch.optim.Optimizer)`), a submodule (`torch.optim.lr_scheduler`),
# nor an optimizer's own members (`self.optim.step()`): none builds an optimizer
OPTIMIZER_TOKENS = ("optim", r"!optim.Optimizer|(?!__dict__)[a-z_]\w*")
CLIP_TOKENS = ("clip_grad*", "get_total_norm")

# Factories whose first argument is the data itself.
DATA_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.FloatTensor",
                            "torch.IntTensor", "torch.DoubleTensor", "torch.Tensor"})
# Factories whose positional arguments are the shape.
SHAPE_FACTORIES = frozenset({"torch.ones", "torch.zeros", "torch.randn", "torch.rand", "torch.empty"})
# Source text that can build a tensor whose shape is written out: a factory given a nested
# list or tuple, or a shape factory given a number. A function of another module that holds
# none cannot return such a tensor unless it is passed one.
LITERAL_SHAPE_SOURCE = re.compile(r"\b(?:tensor|as_tensor|LongTensor|FloatTensor|IntTensor|DoubleTensor|Tensor)\s*\(\s*[\[(]"
                                  r"|\b(?:ones|zeros|randn|rand|empty)\s*\(\s*\d")
LITERAL_METHODS = frozenset({"long", "int", "float", "double", "clone", "to", "contiguous", "cpu"})

# Which ops work on which sparse inputs, and what they return, is not listed here: it is
# generated by asking torch (tools/probe_torch.py) and read through sparselint.optable.

# Functions the tables above name, for a value that holds one (`norm = torch.sparse.sum`)
KNOWN_FUNCTIONS = frozenset(n for n in {*SPARSE_CONSTRUCTORS, *DENSE_FACTORIES, *LIKE_FACTORIES, *FUNCTIONAL_EMBEDDINGS,
                             *PRODUCTS, *GRAD_COALESCED_BY, *SPARSE_RESULT, *CLIP_FUNCTIONS, *BACKWARD_FUNCTIONS,
                             *DATA_FACTORIES} if n.rpartition(".")[2][:1].islower())
