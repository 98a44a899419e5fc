"""Hyperparameters at the top of the script, read by the optimizer factory."""
import torch
import torch.nn as nn

LR = 0.1
WEIGHT_DECAY = 1e-4


def make_optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)


model = nn.Sequential(nn.Embedding(30, 4, sparse=True), nn.Linear(4, 1))
optimizer = make_optimizer(model)
model(torch.tensor([1, 2])).sum().backward()
optimizer.step()
