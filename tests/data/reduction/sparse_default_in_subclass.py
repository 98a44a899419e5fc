"""A small base class supplies the optimizer; the subclass adds sparse embeddings."""
import torch
import torch.nn as nn


class BaseModule(nn.Module):
    lr = 1e-3

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


class TwoTower(BaseModule):
    def __init__(self, num_users=100, num_items=200, dim=8, sparse=True):
        super().__init__()
        self.users = nn.Embedding(num_users, dim, sparse=sparse)
        self.items = nn.Embedding(num_items, dim, sparse=sparse)

    def forward(self, u, i):
        return (self.users(u) * self.items(i)).sum(-1)


def fit(module, batches):
    optimizer = module.configure_optimizers()
    for u, i, y in batches:
        optimizer.zero_grad()
        nn.functional.mse_loss(module(u, i), y).backward()
        optimizer.step()


if __name__ == "__main__":
    fit(TwoTower(), [(torch.tensor([1, 2]), torch.tensor([3, 4]), torch.rand(2))])
