"""Helpers for tests of the readers' networks."""

from __future__ import annotations


def trained_looking_batchnorms(net) -> None:
    """Give every BatchNorm of ``net`` statistics and an affine that are not the identity (as after training), so
    a test that folds, moves or averages blocks would show a block put in the wrong place."""
    import torch

    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
