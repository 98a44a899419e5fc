"""A Lightning-style recommender; the CLI in another file instantiates it."""
import torch
import torch.nn as nn


class MFModule(nn.Module):
    def __init__(self, num_users=1000, num_items=500, dim=32, sparse=True):
        super().__init__()
        self.users = nn.Embedding(num_users, dim, sparse=sparse)
        self.items = nn.Embedding(num_items, dim, sparse=sparse)
        self.weight_decay = 1e-4
        self.lr = 0.05

    def forward(self, u, i):
        return (self.users(u) * self.items(i)).sum(-1)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr, weight_decay=self.weight_decay)
