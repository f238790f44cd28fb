"""Attachments from Python: a rope's top attached to a moving sphere follows its point, a
rope's end attached to a body holds it, the attachments read back as set, and bad input is
refused naming the attachment."""
import numpy as np
import pytest

import pbfcl

R = 0.01


def rope_and_body(context):
    """A rope of 5 (its top static) hanging at (0.3, 0.8, 0.5) and a rigid square body of 4 below
    its end, in a unit box; a sphere above the rope moving along x."""
    s = pbfcl.Solver(capacity=9, context=context,
                     params={"domain_min": (0, 0, 0), "domain_max": (1, 1, 1),
                             "particle_radius": R})
    rope = np.float32([[0.3, 0.8 - 2 * R * i, 0.5] for i in range(5)])
    body = np.float32([[0.3 + R * sx, 0.8 - 10 * R, 0.5 + R * sz]
                       for sx in (-1, 1) for sz in (-1, 1)])
    s.add(np.concatenate([rope, body]))
    s.set_phases([pbfcl.PHASE_STATIC, 0, 0, 0, 0, 1, 1, 1, 1])
    s.set_groups([1, 2, 3, 4], 0, 100.0)
    s.set_distances([[i, i + 1] for i in range(4)], np.full(4, 2 * R, np.float32))
    sphere = s.create_shape("sphere", radius=0.02, position=(0.3, 0.84, 0.5),
                            velocity=(0.2, 0, 0))
    return s, sphere


def test_rope_follows_a_shape_and_holds_a_body(context):
    s, sphere = rope_and_body(context)
    with s:
        s.set_attachments([0, 4], [pbfcl.ATTACH_SHAPE, pbfcl.ATTACH_BODY], [sphere, 0],
                          [[0, -0.04, 0], [0, 2 * R, 0]], compliance=[0.0, 1e-4])
        assert s.attachment_count == 2
        p, k, t, x, c = s.get_attachments()
        assert p.tolist() == [0, 4] and k.tolist() == [pbfcl.ATTACH_SHAPE, pbfcl.ATTACH_BODY]
        assert t.tolist() == [sphere, 0] and x.shape == (2, 3)
        assert c[1] == pytest.approx(1e-4)
        y0 = s.get_bodies()[0][0, 1]
        for _ in range(30):
            s.step()
        pos, rot = s.get_shape_pose(sphere)
        assert rot.tolist() == [0, 0, 0, 1]
        top = s.positions[0]
        assert np.abs(top - (pos + [0, -0.04, 0])).max() < 1e-5  # on the sphere's point
        assert pos[0] == pytest.approx(0.3 + 0.2 * 0.5, abs=1e-4)
        assert s.get_bodies()[0][0, 1] > y0 - 0.05  # held (the rope gives): free fall is 1.2 m


def test_bad_attachments_refused(context):
    s, sphere = rope_and_body(context)
    with s:
        with pytest.raises(pbfcl.ArgumentError, match="attachment 0 .*not static"):
            s.set_attachments([2], pbfcl.ATTACH_SHAPE, sphere, [[0, 0, 0]])
        with pytest.raises(pbfcl.ArgumentError, match="attachment 1 .*does not exist"):
            s.set_attachments([2, 3], pbfcl.ATTACH_BODY, [0, 5], [[0, 0, 0], [0, 0, 0]])
        with pytest.raises(ValueError):
            s.set_attachments([2], pbfcl.ATTACH_BODY, 0, [[0, 0]])
        assert s.attachment_count == 0


def test_scene_attach_key(context):
    """docs/scenes/attached.json: the flag's pinned edge (9 particles) moves with the pole it is
    attached to, 2 cm beside its axis; the rope's pinned start hangs from the buoy."""
    import os
    scene = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "scenes", "attached.json")
    with pbfcl.Solver(scene, context=context) as s:
        p, k, t, x, _ = s.get_attachments()
        assert len(p) == 10 and (k[:9] == pbfcl.ATTACH_SHAPE).all() and k[9] == pbfcl.ATTACH_BODY
        for _ in range(30):
            s.step()
        pole, _ = s.get_shape_pose(int(t[0]))
        edge = s.positions[p[:9]]
        assert pole[0] == pytest.approx(0.15 + 0.3 * 0.5, abs=1e-4)
        assert np.abs(edge[:, 0] - (pole[0] + 0.02)).max() < 1e-5


def test_scene_attach_to_moving_obstacle(context):
    """A rope whose pinned start is attached to an obstacle moving at 0.2 m/s joins its path: after
    0.5 s the start has moved 0.1 m along x, as the obstacle's particles have, and the rope's
    other particles stay finite."""
    scene = {
        "domain": {"min": [0, 0, 0], "max": [1, 1, 1]}, "particle_radius": R,
        "fluid": [{"min": [0.7, 0, 0.4], "max": [0.8, 0.05, 0.5]}],
        "obstacles": [{"box": {"min": [0.2, 0.8, 0.45], "max": [0.26, 0.86, 0.55]},
                       "velocity": [0.2, 0, 0], "until": 2.0}],
        "rope": [{"start": [0.23, 0.78, 0.5], "end": [0.23, 0.6, 0.5], "points": 10,
                  "mass": 0.01, "pin": ["start"], "attach": {"obstacle": 0}}],
    }
    with pbfcl.Solver(scene, context=context) as s:
        assert s.attachment_count == 0  # on the path, not an attachment
        start = s.count - 10
        x0 = s.positions.copy()
        for _ in range(30):
            s.step()
        x = s.positions
        assert x[start, 0] - x0[start, 0] == pytest.approx(0.1, abs=1e-5)
        first = int(np.argmax(s.get_phases() == pbfcl.PHASE_STATIC))  # an obstacle particle
        assert x[first, 0] - x0[first, 0] == pytest.approx(0.1, abs=1e-5)
        assert np.isfinite(x).all()
