"""compare.py's sampling order: every side leads in turn and none always follows the same
other one (a side that leaves threads spinning after its calls would slow it every round)."""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench", "compare"))
from compare import sample_order  # noqa: E402


def samples(sides, rounds):
    return [side for r in range(rounds) for side in sample_order(sides, r)]


def test_each_round_samples_every_side_once():
    for sides in (["ours", "torch"], ["ours", "glibc", "mimalloc"]):
        for r in range(12):
            assert sorted(sample_order(sides, r)) == sorted(sides)


def test_every_side_leads_equally_often():
    for sides in (["ours", "torch"], ["ours", "glibc", "mimalloc"]):
        leads = collections.Counter(sample_order(sides, r)[0] for r in range(2 * len(sides)))
        assert leads == {side: 2 for side in sides}


def test_no_side_always_follows_the_same_one():
    # Nine rounds, as scripts/bench runs them.
    for sides in (["ours", "torch"], ["ours", "glibc", "mimalloc"]):
        run = samples(sides, 9)
        before = collections.defaultdict(collections.Counter)
        for previous, side in zip(run, run[1:]):
            before[side][previous] += 1
        for side in sides:
            assert len(before[side]) > 1, (side, dict(before[side]))


def test_two_sides_alternate_who_goes_first():
    # Two sides in 4 rounds: ours-torch, torch-ours, torch-ours, ours-torch.
    assert [sample_order(["ours", "torch"], r)[0] for r in range(4)] == [
        "ours", "torch", "torch", "ours"]
