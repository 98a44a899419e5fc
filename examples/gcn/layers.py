"""A small graph convolution with learned edge weights."""
import torch
import torch.nn as nn


def normalized_adjacency(edge_index, edge_weight, num_nodes):
    adj = torch.sparse_coo_tensor(edge_index, edge_weight, (num_nodes, num_nodes))
    deg = torch.zeros(num_nodes).index_add_(0, adj.indices()[0], adj.values())
    return adj, deg


class EdgeWeightedGCN(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)

    def forward(self, x, adj):
        return torch.sparse.mm(adj, self.lin(x))
