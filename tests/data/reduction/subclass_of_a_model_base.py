"""A base model builds the sparse embedding; a subclass adds the training step."""
import torch
import torch.nn as nn


class BaseRecommender(nn.Module):
    def __init__(self, num_items=100, dim=8):
        super().__init__()
        self.items = nn.Embedding(num_items, dim, sparse=True)


class Recommender(BaseRecommender):
    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)

    def grad_norm(self):
        return self.items.weight.grad.values().norm()
