"""The training loop; run by the launcher script with a config."""
import torch
import torch.nn.functional as F

from models import Recommender


class Trainer:
    def __init__(self, num_users, num_items):
        self.model = Recommender(num_users, num_items)

    def configure_optimizer(self, lr=1e-3):
        return torch.optim.Adam(self.model.parameters(), lr=lr)

    def fit(self, batches, epochs=1):
        optimizer = self.configure_optimizer()
        for _ in range(epochs):
            for u, i, y in batches:
                optimizer.zero_grad()
                F.mse_loss(self.model(u, i), y).backward()
                optimizer.step()
