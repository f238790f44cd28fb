"""Checkpoints: a state saved to bytes or a file and loaded into a fresh solver continues bit
for bit."""
import numpy as np

import pbfcl


def test_state_continues_bit_for_bit(context, tmp_path):
    with pbfcl.Solver("dam-break", particles=500, context=context) as a:
        for _ in range(5):
            a.step()
        data = a.save_state()
        a.save(tmp_path / "state.bin")
        for _ in range(5):
            a.step()
        want = a.positions
    for load in (lambda b: b.load_state(data), lambda b: b.load(tmp_path / "state.bin")):
        with pbfcl.Solver(capacity=600, context=context) as b:
            load(b)
            assert b.frames == 5
            for _ in range(5):
                b.step()
            assert b.positions.tobytes() == want.tobytes()
