"""Cloth and ropes from Python, by particle index: a scene's cloth read back as the scene cooks
it, distance constraints, solid groups, inverse masses and triangles set and read back, a
pinned rope hanging with each edge's tension its share of the weight, and bad input refused
naming what is wrong (the library's message, or the array's dtype, shape or value)."""
import numpy as np
import pytest

import pbfcl

R = 0.01
G = 9.81


def cloth_scene(nu=5, nv=4):
    return {"domain": {"min": [0, 0, 0], "max": [0.6, 0.4, 0.6]}, "particle_radius": R,
            "fluid": [{"min": [0, 0, 0], "max": [0.04, 0.02, 0.04]}],
            "cloth": [{"corner": [0.1, 0.2, 0.1], "u": [0.02 * (nu - 1), 0, 0],
                       "v": [0, 0, 0.02 * (nv - 1)], "resolution": [nu, nv], "mass": 0.1,
                       "stretch_compliance": 1e-7, "bend_compliance": 0.01}]}


def test_scene_cloth_read_back(context):
    nu, nv = 5, 4
    with pbfcl.Solver(cloth_scene(nu, nv), context=context) as s:
        first = s.count - nu * nv
        pairs, rest, comp, tether = s.get_distances()
        c = s.distance_count
        assert c > 0 and pairs.shape == (c, 2) and pairs.dtype == np.uint32
        assert rest.shape == comp.shape == tether.shape == (c,)
        assert rest.dtype == comp.dtype == np.float32 and tether.dtype == np.bool_
        assert pairs.min() >= first and pairs.max() < s.count
        x = s.positions  # before any step: the rest lengths are the distances between them
        d = np.linalg.norm(x[pairs[:, 0]] - x[pairs[:, 1]], axis=1)
        np.testing.assert_allclose(rest, d, rtol=1e-5)
        assert set(np.unique(comp)) == {np.float32(1e-7), np.float32(0.01)}
        assert not tether.any()
        tri = s.get_triangles()
        assert tri.shape == (2 * (nu - 1) * (nv - 1), 3) == (s.triangle_count, 3)
        assert tri.min() >= first
        phases = s.particle_phases
        assert (phases[first:] == pbfcl.phase_solid_group(0)).all()
        w = s.inverse_masses
        np.testing.assert_allclose(w[first:], nu * nv / 0.1, rtol=1e-6)


def test_distances_set_and_refused(context):
    with pbfcl.Solver(capacity=8, context=context) as s:
        s.add(np.array([[0.1 + 0.02 * i, 0.3, 0.1] for i in range(6)], np.float32))
        s.set_distances([[0, 1], [1, 2], [2, 3]], [0.02, 0.02, 0.03], compliance=1e-6,
                        tether=[False, True, False])
        pairs, rest, comp, tether = s.get_distances()
        assert pairs.tolist() == [[0, 1], [1, 2], [2, 3]]
        np.testing.assert_array_equal(rest, np.float32([0.02, 0.02, 0.03]))
        np.testing.assert_array_equal(comp, np.float32([1e-6] * 3))
        assert tether.tolist() == [False, True, False]
        with pytest.raises(pbfcl.ArgumentError, match="constraint 1 "):
            s.set_distances([[0, 1], [2, 2]], [0.02, 0.02])  # a particle joined to itself
        with pytest.raises(pbfcl.ArgumentError, match="constraint 0 "):
            s.set_distances([[0, 9]], [0.02])  # index beyond the particles
        with pytest.raises(pbfcl.ArgumentError, match="constraint 0 "):
            s.set_distances([[0, 1]], [-0.02])
        assert s.distance_count == 3  # the old ones kept
        with pytest.raises(ValueError, match="pairs: value -1 .* does not fit uint32"):
            s.set_distances(np.array([[0, -1]]), [0.02])
        with pytest.raises(TypeError, match="pairs must be a uint32 array"):
            s.set_distances([[0.0, 1.5]], [0.02])
        with pytest.raises(ValueError, match=r"pairs must have shape \(N, 2\)"):
            s.set_distances([[0, 1, 2]], [0.02])
        with pytest.raises(ValueError, match=r"rest must have shape \(2,\), one row per "
                                             "constraint"):
            s.set_distances([[0, 1], [1, 2]], [0.02])
        with pytest.raises(TypeError, match="tether must be booleans"):
            s.set_distances([[0, 1]], [0.02], tether=[0.5])
        with pytest.raises(TypeError, match="rest must be a float32 array"):
            s.set_distances([[0, 1]], np.array([0.02]))  # float64 refused, as elsewhere
        assert s.distance_count == 3
        s.set_distances([], [])
        assert s.distance_count == 0 and s.get_distances()[0].shape == (0, 2)
        assert s.get_distance_forces().shape == (0,)


def hanging_rope(s, n):
    """A vertical rope of n particles at spacing 2r from (0.3, 0.3, 0.3) down, its top static,
    each edge a constraint (constraint c joins particles c and c + 1), mass 1 g each."""
    s.add(np.array([[0.3, 0.3 - 2 * R * i, 0.3] for i in range(n)], np.float32))
    phases = np.zeros(n, np.int32)
    phases[0] = pbfcl.PHASE_STATIC
    s.phases = phases
    s.set_groups(np.arange(1, n), 0, 1000.0)
    edges = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1)
    s.set_distances(edges, np.full(n - 1, 2 * R, np.float32), compliance=1e-7)


def test_rope_tension_by_constraint(context):
    n = 8
    with pbfcl.Solver(capacity=n, context=context,
                      params={"iterations": 30, "domain_min": (0, 0, 0),
                              "domain_max": (0.6, 0.6, 0.6), "particle_radius": R}) as s:
        hanging_rope(s, n)
        assert s.particle_phases[1:].tolist() == [pbfcl.phase_solid_group(0)] * (n - 1)
        w = s.inverse_masses
        assert w[0] == 0 and np.allclose(w[1:], 1000.0)
        for _ in range(120):
            s.step()
        x = s.positions
        assert np.abs(np.diff(x[:, 1]) + 2 * R).max() < 0.1 * R  # hangs at its rest lengths
        f = s.get_distance_forces()
        out = np.empty(n - 1, np.float32)
        assert s.get_distance_forces(out=out) is out and (out == f).all()
        # edge c holds the n - 1 - c particles of 1 g below it
        weight = (n - 1 - np.arange(n - 1)) * 1e-3 * G
        np.testing.assert_allclose(f, weight, rtol=0.05)
        # heavier particles (inverse mass halved) pull twice as hard
        s.inverse_masses = np.where(np.arange(n) == 0, 0, 500).astype(np.float32)
        for _ in range(120):
            s.step()
        np.testing.assert_allclose(s.get_distance_forces(), 2 * weight, rtol=0.05)


def test_groups_inverse_masses_and_triangles_refused(context):
    with pbfcl.Solver(capacity=8, context=context) as s:
        s.add(np.array([[0.1 + 0.02 * i, 0.3, 0.1] for i in range(5)], np.float32))
        s.phases = np.array([-1, 0, 0, 0, 0], np.int32)
        with pytest.raises(pbfcl.ArgumentError, match="static"):
            s.set_groups([0, 1], 0, 100.0)  # a static particle cannot join a group
        with pytest.raises(pbfcl.ArgumentError):
            s.set_groups([1, 2], [0, 1], [100.0, 0.0])  # zero inverse mass
        with pytest.raises(ValueError, match="group -1 is out of range"):
            s.set_groups([1, 2], -1, 100.0)
        s.set_groups([1, 2, 3], [0, 0, 1], np.float32([50, 50, 70]))
        w = s.inverse_masses
        assert w[0] == 0 and w[1] == w[2] == 50 and w[3] == 70
        with pytest.raises(pbfcl.ArgumentError):
            s.set_inverse_masses(np.float32([0, 50, 50, 70, 3.0]))  # a fluid particle's own only
        s.set_triangles([[1, 2, 3], [0, 1, 2]])
        assert s.triangle_count == 2
        assert s.get_triangles().tolist() == [[1, 2, 3], [0, 1, 2]]
        with pytest.raises(pbfcl.ArgumentError, match="triangle 1"):
            s.set_triangles([[1, 2, 3], [1, 1, 2]])
        with pytest.raises(ValueError, match=r"triangles must have shape \(N, 3\)"):
            s.set_triangles([[1, 2]])
        s.remove([4])
        assert s.triangle_count == 0  # removing particles clears them
