"""Model definitions."""
import torch.nn as nn


class Recommender(nn.Module):
    def __init__(self, num_users=1000, num_items=500, dim=32):
        super().__init__()
        self.users = nn.Embedding(num_users, dim, sparse=True)
        self.items = nn.Embedding(num_items, dim, sparse=True)

    def forward(self, u, i):
        return (self.users(u) * self.items(i)).sum(-1)
