"""A training script with module-level switches; clipping is off for the sparse model."""
import torch
import torch.nn as nn

USE_CLIPPING = False
MAX_NORM = 1.0


def train_step(model, optimizer, batch):
    optimizer.zero_grad()
    model(batch).sum().backward()
    if USE_CLIPPING:
        torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
    optimizer.step()


model = nn.Sequential(nn.Embedding(30, 4, sparse=True), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    train_step(model, optimizer, torch.tensor([1, 2]))
