"""A Lightning-style module that clips in its own training step, when configured to."""
import torch
import torch.nn as nn


class BagRecommender(nn.Module):
    def __init__(self, num_items=1000, dim=16, sparse=True):
        super().__init__()
        self.bag = nn.EmbeddingBag(num_items, dim, mode="sum", sparse=sparse)
        self.head = nn.Linear(dim, 1)
        self.max_grad_norm = None

    def forward(self, items, offsets):
        return self.head(self.bag(items, offsets)).squeeze(-1)

    def training_step(self, batch, optimizer):
        items, offsets, y = batch
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(self(items, offsets), y)
        loss.backward()
        if self.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.parameters(), self.max_grad_norm)
        optimizer.step()
        return loss
