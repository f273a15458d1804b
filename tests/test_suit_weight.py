"""The suit head's share of a suited reader's training loss (``--suit-weight``, session 92; ``corner.train``'s
``letter_weight``): 1 is the loss as before, another weight trains another reader. (A bad weight refused in one line,
and the recipe recording it: tests/test_suited_ink_shares.py.)"""

import numpy as np

from vision import corner as cr
from vision import suited_reader as sr


def _views():
    """24 random colour crops with standard52 rank and suit labels (normalized crops, ranks, suits)."""
    rng = np.random.default_rng(92)
    crops = rng.integers(0, 256, (24, cr.CORNER_H, cr.CORNER_W, 3), dtype=np.uint8)
    return cr.normalize(crops), rng.integers(0, 14, 24), rng.integers(0, 4, 24)


SMALL = dict(batch=8, lr=1e-2, threads=1, net_kw=sr.net_kw("standard52"))


def _trained(weight=None):
    X, R, L = _views()
    kw = {} if weight is None else {"letter_weight": weight}
    net = cr.train(X, R, L, 4, None, log=lambda m: None, **SMALL, **kw)
    import torch

    with torch.no_grad():
        net.eval()
        pr, pl, _ = net(torch.from_numpy(X[:4]))
    return pr.numpy(), pl.numpy()


def test_a_weight_of_one_is_the_loss_as_before_and_another_weight_trains_another_reader():
    before, one, two = _trained(), _trained(1.0), _trained(2.0)
    assert all(np.array_equal(a, b) for a, b in zip(before, one))
    assert not np.allclose(before[0], two[0]) and not np.allclose(before[1], two[1])


def test_a_checkpoint_of_another_weight_is_not_gone_on_from(tmp_path):
    """A run cut off at one suit weight leaves a checkpoint; a run of the same length at another weight starts
    afresh instead of going on from it (the same weight does go on: tests/test_camera_train_smoke.py)."""
    X, R, L = _views()
    kw = dict(SMALL, checkpoint=tmp_path / "r.ckpt", checkpoint_every=2)

    class Cut(Exception):
        pass

    def cut(msg):
        if "step 3/4" in msg:
            raise Cut

    try:
        cr.train(X, R, L, 4, None, log=cut, **kw)
    except Cut:
        pass
    assert (tmp_path / "r.ckpt").exists()
    said: list = []
    cr.train(X, R, L, 4, None, log=said.append, letter_weight=2.0, **kw)
    assert said and not any("going on from step" in m for m in said)
