"""Learn edge weights of a fixed graph by gradient descent."""
import torch

from layers import EdgeWeightedGCN

torch.manual_seed(0)
edge_index = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
edge_weight = torch.ones(edge_index.size(1), requires_grad=True)
x, y = torch.randn(4, 8), torch.randn(4, 2)
model = EdgeWeightedGCN(8, 2)
opt = torch.optim.SGD([edge_weight, *model.parameters()], lr=0.1)

adj = torch.sparse_coo_tensor(edge_index, edge_weight, (4, 4))
for epoch in range(10):
    opt.zero_grad()
    loss = (model(x, adj) - y).pow(2).mean()
    loss.backward()
    opt.step()
    print(epoch, adj.grad.values())
