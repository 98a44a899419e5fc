"""One small training step over a sparse adjacency: the smallest run a user makes."""
import torch

edges = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
adj = torch.sparse_coo_tensor(edges, torch.ones(4), (3, 3)).coalesce()
weight = torch.randn(3, 2, requires_grad=True)
features = torch.randn(3, 3)

out = torch.sparse.mm(adj, features @ weight)
loss = out.pow(2).sum()
loss.backward()
with torch.no_grad():
    weight -= 0.1 * weight.grad
