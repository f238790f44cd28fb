"""Collision shapes from Python, by id: made of every kind, placed, moved and read back, the
force the fluid resting on one exerts on it (its weight) and its contacts, destroyed, and bad
input refused naming the argument or the shape."""
import numpy as np
import pytest

import pbfcl

R = 0.01
G = 9.81


def block_solver(context, n=6):
    """A block of n^3 fluid particles at spacing 2r, its bottom 0.1 m above the floor."""
    s = pbfcl.Solver(capacity=n ** 3, context=context,
                     params={"domain_min": (0, 0, 0), "domain_max": (0.4, 0.4, 0.4),
                             "particle_radius": R, "iterations": 6})
    g = np.arange(n) * 2 * R
    x = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3) + (0.15, 0.1 + R, 0.15)
    s.add(x.astype(np.float32))
    return s


def test_table_carries_the_fluids_weight(context):
    """A box as a table under a block of fluid: once at rest, the force on it is the fluid's
    weight, straight down, and the fluid stays on it."""
    with block_solver(context) as s:
        table = s.create_shape("box", half_extents=(0.18, 0.05, 0.18), position=(0.2, 0.05, 0.2),
                               friction=0.5, name="table")
        assert s.shape_count == 1
        pos, rot = s.get_shape_pose(table)
        assert pos.dtype == np.float32 and pos.tolist() == pytest.approx([0.2, 0.05, 0.2])
        assert rot.tolist() == [0, 0, 0, 1]
        c = s.shape_contacts(table)
        assert c["force"].tolist() == [0, 0, 0] and c["contacts"] == 0  # before a step
        for _ in range(90):
            s.step()
        c = s.shape_contacts(table)
        mass = s.count * s.params.rest_density * (2 * R) ** 3
        assert c["force"][1] == pytest.approx(-mass * G, rel=0.15)
        assert abs(c["force"][0]) < 0.05 * mass * G and abs(c["force"][2]) < 0.05 * mass * G
        assert c["contacts"] > 0 and c["inside"] == 0
        assert s.positions[:, 1].min() > 0.1 + 0.5 * R  # on the table, not through it


# A closed tetrahedron, counter-clockwise from outside; the same with a face left out is open.
TET = np.float32([[0, 0, 0], [0.05, 0, 0], [0, 0.05, 0], [0, 0, 0.05]])
TET_FACES = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]


def test_every_kind_placed_moved_destroyed(context):
    with block_solver(context, 2) as s:
        cube = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)],
                        np.float32) * 0.03
        quad = np.float32([[-0.1, 0, -0.1], [0.1, 0, -0.1], [0.1, 0, 0.1], [-0.1, 0, 0.1]])
        ids = [
            s.create_shape("sphere", radius=0.02, position=(0.05, 0.05, 0.05)),
            s.create_shape("capsule", radius=0.01, half_length=0.03, position=(0.3, 0.3, 0.05)),
            s.create_shape("box", half_extents=(0.02, 0.02, 0.02), position=(0.05, 0.3, 0.3),
                           rotation=(0, 0, 2, 2)),  # normalised to 45 degrees about z
            s.create_shape("convex", points=cube, position=(0.3, 0.05, 0.3)),
            s.create_shape("mesh", vertices=quad, triangles=[[0, 2, 1], [0, 3, 2]],
                           two_sided=True, position=(0.3, 0.02, 0.05)),
            s.create_shape("sdf", vertices=TET, triangles=TET_FACES, sdf_resolution=8,
                           position=(0.2, 0.2, 0.2), velocity=(0.1, 0, 0), until=0.01),
        ]
        assert len(set(ids)) == 6 and s.shape_count == 6
        _, rot = s.get_shape_pose(ids[2])
        assert rot.tolist() == pytest.approx([0, 0, 0.5 ** 0.5, 0.5 ** 0.5], abs=1e-6)
        s.set_shape_motion(ids[0], position=(0.06, 0.05, 0.05), velocity=(0.1, 0, 0))
        pos, _ = s.get_shape_pose(ids[0])
        assert pos.tolist() == pytest.approx([0.06, 0.05, 0.05])
        s.step()  # the velocity moves it each substep: 0.1 m/s over one frame
        pos, _ = s.get_shape_pose(ids[0])
        assert pos[0] == pytest.approx(0.06 + 0.1 * s.params.dt, abs=1e-4)
        pos, _ = s.get_shape_pose(ids[5])  # moved for 0.01 s of its velocity, then stopped
        assert pos[0] == pytest.approx(0.2 + 0.1 * 0.01, abs=1e-5)
        s.step()
        assert s.get_shape_pose(ids[5])[0][0] == pos[0]
        s.destroy_shape(ids[1])
        assert s.shape_count == 5
        with pytest.raises(pbfcl.ArgumentError):
            s.get_shape_pose(ids[1])
        with pytest.raises(pbfcl.ArgumentError):
            s.shape_contacts(ids[1])
        again = s.create_shape("sphere", radius=0.01, position=(0.2, 0.3, 0.2))
        assert again not in ids  # ids are never reused


def test_shapes_in_saved_state(context):
    with block_solver(context, 2) as s, block_solver(context, 2) as t:
        s.create_shape("box", half_extents=(0.1, 0.02, 0.1), position=(0.2, 0.1, 0.2),
                       velocity=(0, 0.05, 0), angular_velocity=(0, 1, 0))
        s.create_shape("sdf", vertices=TET, triangles=TET_FACES, position=(0.1, 0.3, 0.1))
        s.step()
        t.create_shape("sphere", radius=0.05)  # replaced by the load
        t.load_state(s.save_state())
        assert t.shape_count == 2
        for _ in range(3):
            s.step()
            t.step()
        for k in range(2):
            for a, b in zip(s.get_shape_pose(k), t.get_shape_pose(k)):
                assert a.tobytes() == b.tobytes()
        assert s.positions.tobytes() == t.positions.tobytes()


def test_shapes_refused(context):
    with block_solver(context, 2) as s:
        with pytest.raises(ValueError, match="unknown shape kind 'cone'"):
            s.create_shape("cone", radius=0.1)
        with pytest.raises(pbfcl.ArgumentError, match="ball"):
            s.create_shape("sphere", radius=-1, name="ball")
        with pytest.raises(ValueError, match="position must be 3 finite numbers"):
            s.create_shape("sphere", radius=0.1, position=(0, float("nan"), 0))
        with pytest.raises(ValueError, match="rotation must be 4 finite numbers"):
            s.create_shape("sphere", radius=0.1, rotation=(0, 0, 1))
        with pytest.raises(pbfcl.ArgumentError):
            s.create_shape("convex", points=np.zeros((3, 3), np.float32))
        with pytest.raises(ValueError, match="triangles: value -1"):
            s.create_shape("mesh", vertices=np.zeros((3, 3), np.float32),
                           triangles=np.array([[0, 1, -1]]))
        with pytest.raises(pbfcl.Error):
            s.create_shape("mesh", obj="/nonexistent/cup.obj")
        with pytest.raises(pbfcl.ArgumentError, match="close the mesh"):
            s.create_shape("sdf", vertices=TET, triangles=TET_FACES[:3])
        assert s.shape_count == 0
        for k in range(pbfcl.MAX_SHAPES):
            s.create_shape("sphere", radius=0.005, position=(0.02 + 0.005 * k, 0.35, 0.35))
        with pytest.raises(pbfcl.ArgumentError):
            s.create_shape("sphere", radius=0.005, position=(0.2, 0.35, 0.2))
        with pytest.raises(pbfcl.ArgumentError):
            s.destroy_shape(12345)
