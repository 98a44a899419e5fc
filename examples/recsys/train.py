"""Matrix factorisation with sparse embeddings and per-row gradient clipping."""
import torch
import torch.nn as nn

torch.manual_seed(0)
users = nn.Embedding(100, 16, sparse=True)
items = nn.Embedding(500, 16, sparse=True)
opt = torch.optim.SGD([*users.parameters(), *items.parameters()], lr=0.05)

u = torch.randint(0, 100, (64,))
i = torch.randint(0, 500, (64,))
rating = torch.rand(64)

for step in range(5):
    opt.zero_grad()
    pred = (users(u) * items(i)).sum(dim=1)
    loss = (pred - rating).pow(2).mean()
    loss.backward()
    items.weight.grad.coalesce().values().clamp_(-1.0, 1.0)
    print(step, loss.item(), items.weight.grad.values().norm().item())
    opt.step()
