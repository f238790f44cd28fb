"""Inflatables from Python (Solver.set_inflatables and its getters): a balloon built here (an
icosphere's triangles, its edges and bends as distance constraints) is read back as set; at
rest with gravity off it holds pressure times its rest volume (within 1 %); squeezed by a plate it keeps
Boyle's law, (P_a + P) V = P_a V1 with the ambient pressure P_a = V1 / compliance, the volume
measured here from the positions; bad input is refused with the library's message."""
import numpy as np
import pytest

import pbfcl

R = 0.01


def icosphere(centre, radius, subdivisions):
    """Vertices (V, 3) and counter-clockwise triangles (T, 3) of a subdivided icosahedron."""
    t = (1 + 5 ** 0.5) / 2
    v = [[-1, t, 0], [1, t, 0], [-1, -t, 0], [1, -t, 0], [0, -1, t], [0, 1, t], [0, -1, -t],
         [0, 1, -t], [t, 0, -1], [t, 0, 1], [-t, 0, -1], [-t, 0, 1]]
    f = [[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9], [5, 11, 4],
         [11, 10, 2], [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8],
         [3, 8, 9], [4, 9, 5], [2, 4, 11], [6, 2, 10], [8, 6, 7], [9, 8, 1]]
    v = [list(np.array(p) / np.linalg.norm(p)) for p in v]
    for _ in range(subdivisions):
        mid, nf = {}, []

        def middle(a, b):
            key = (min(a, b), max(a, b))
            if key not in mid:
                m = (np.array(v[a]) + np.array(v[b])) / 2
                v.append(list(m / np.linalg.norm(m)))
                mid[key] = len(v) - 1
            return mid[key]
        for a, b, c in f:
            ab, bc, ca = middle(a, b), middle(b, c), middle(c, a)
            nf += [[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]
        f = nf
    return np.array(centre) + radius * np.array(v), np.array(f, np.uint32)


def shell(tri):
    """The mesh's edges and, across each edge, the pair of opposite vertices (its bends)."""
    opposite = {}
    for a, b, c in tri.tolist():
        for x, y, o in ((a, b, c), (b, c, a), (c, a, b)):
            opposite.setdefault((min(x, y), max(x, y)), []).append(o)
    edges = np.array(sorted(opposite), np.uint32)
    bends = np.array([opposite[e] for e in sorted(opposite)], np.uint32)
    return edges, bends


def volume(x, tri):
    """The volume the triangles enclose, in double precision (the divergence theorem)."""
    a, b, c = (x[tri[:, k]].astype(np.float64) for k in range(3))
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6)


def balloon(s, centre=(0.2, 0.12, 0.2), radius=0.1, pressure=1.0, compliance=0.0, shell_c=0.0):
    """Adds a balloon (2 subdivisions: 162 particles 2.6 cm apart, 0.5 kg; its edges of
    compliance shell_c) to s; returns its triangles and rest volume."""
    x, tri = icosphere(centre, radius, 2)
    s.add(x.astype(np.float32))
    n = len(x)
    s.set_groups(np.arange(n), 0, n / 0.5)
    edges, bends = shell(tri)
    xf = s.positions
    pairs = np.concatenate([edges, bends])
    rest = np.linalg.norm(xf[pairs[:, 0]] - xf[pairs[:, 1]], axis=1).astype(np.float32)
    comp = np.concatenate([np.full(len(edges), shell_c), np.full(len(bends), 1e-3)])
    comp = comp.astype(np.float32)
    s.set_distances(pairs, rest, compliance=comp)
    v1 = volume(xf, tri)
    s.set_inflatables([len(tri)], tri, v1, pressure=pressure, compliance=compliance)
    return tri, v1


def solver(context):
    return pbfcl.Solver(capacity=200, context=context,
                        params={"domain_min": (0, 0, 0), "domain_max": (0.4, 0.4, 0.4),
                                "particle_radius": R, "gravity": (0, 0, 0), "iterations": 12})


def test_balloon_read_back_and_at_rest(context):
    with solver(context) as s:
        tri, v1 = balloon(s, pressure=1.2, shell_c=1e-6)  # a shell that gives
        assert s.inflatable_count == 1
        counts, t, rest, pressure, comp = s.get_inflatables()
        assert counts.tolist() == [len(tri)] and t.dtype == np.uint32
        np.testing.assert_array_equal(t, tri)
        assert rest[0] == np.float32(v1) and pressure[0] == np.float32(1.2) and comp[0] == 0
        for _ in range(60):
            s.step()
        v = volume(s.positions, tri)
        solver_v, gauge = s.get_inflatable_volumes()
        assert solver_v.shape == gauge.shape == (1,) and solver_v.dtype == np.float32
        assert v == pytest.approx(1.2 * v1, rel=0.01)  # it inflated to pressure * V1
        assert solver_v[0] == pytest.approx(v, rel=0.01)


def test_balloon_squeezed_keeps_boyles_law(context):
    """A plate lowered from 0.24 m to 0.06 m over 1 s onto the balloon (centre 0.12 m up, on
    the floor) and held: over the last half second (P_a + P) V is P_a V1 within 5 % while V is
    below 0.75 V1 (a gas of constant compliance would be 6 % and more off there)."""
    pa = 1e3
    with solver(context) as s:
        x, tri = icosphere((0.2, 0.12, 0.2), 0.1, 2)
        v1 = volume(x, tri)
        tri, v1 = balloon(s, compliance=v1 / pa)
        s.create_shape("box", half_extents=(0.19, 0.02, 0.19), position=(0.2, 0.26, 0.2),
                       velocity=(0, -0.18, 0), until=1.0)
        worst, vmax = 0.0, 0.0
        for f in range(120):
            s.step()
            if f < 90:
                continue
            v = volume(s.positions, tri)
            gauge = float(s.get_inflatable_volumes()[1][0])
            worst = max(worst, abs((pa + gauge) * v / (pa * v1) - 1))
            vmax = max(vmax, v / v1)
        assert vmax < 0.75, f"the squeeze left {vmax:.3f} of the volume: too little to tell"
        assert worst < 0.05, f"(P_a + P) V strayed {100 * worst:.2f} % from P_a V1"


def test_inflatables_refused(context):
    with solver(context) as s:
        x, tri = icosphere((0.2, 0.2, 0.2), 0.1, 1)
        s.add(x.astype(np.float32))
        with pytest.raises(pbfcl.ArgumentError, match="has no triangle on its other side"):
            s.set_inflatables([len(tri) - 1], tri[1:], 0.004)  # open: a triangle left out
        with pytest.raises(pbfcl.ArgumentError, match="inflatable 0"):
            s.set_inflatables([len(tri)], tri, -1.0)  # a negative rest volume
        with pytest.raises(ValueError, match="add up to 79 triangles, but triangles has 80"):
            s.set_inflatables([79], tri, 0.004)
        assert s.inflatable_count == 0  # nothing was set
        s.set_inflatables([len(tri)], tri, 0.004)
        assert s.inflatable_count == 1
        s.set_inflatables([], np.zeros((0, 3), np.uint32), [])
        assert s.inflatable_count == 0
