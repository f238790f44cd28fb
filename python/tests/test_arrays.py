"""Particle arrays by persistent id: what is set is read back row for row, added particles
take the next ids, removing closes the gaps, and `out=` reads into the caller's array."""
import numpy as np
import pytest

import pbfcl


@pytest.fixture
def sim(context):
    s = pbfcl.Solver("dam-break", particles=500, context=context, capacity=2000)
    yield s
    s.destroy()


def scattered(n, seed):
    """n positions inside the dam-break box, in no lattice order."""
    rng = np.random.default_rng(seed)
    return (rng.random((n, 3)) * [1.4, 0.8, 0.4] + 0.1).astype(np.float32)


def test_positions_and_velocities_round_trip(sim):
    x = scattered(sim.count, 1)
    v = scattered(sim.count, 2) - 0.5
    sim.positions = x
    sim.set_velocities(v)
    assert np.array_equal(sim.positions, x)
    assert np.array_equal(sim.get_velocities(), v)


def test_round_trip_survives_steps_by_id(sim):
    """Steps sort the particles internally; row k must still be particle k: each particle,
    moved by a different constant velocity with gravity off and no neighbours nearby, lands
    where its own velocity takes it."""
    n = 64
    s = pbfcl.Solver(capacity=n, context=sim.context,
                     params={"gravity": (0, 0, 0), "viscosity": 0, "vorticity": 0})
    try:
        grid = np.stack(np.meshgrid(*[np.arange(4)] * 3, indexing="ij"), -1).reshape(-1, 3)
        x = (0.2 + grid * 0.2).astype(np.float32)  # 0.2 m apart: no neighbours
        v = np.random.default_rng(3).uniform(-0.05, 0.05, (n, 3)).astype(np.float32)
        s.add(x, v)
        s.step(dt=0.01)
        moved = s.positions - x
        assert np.allclose(moved, v * 0.01, atol=2e-5)
    finally:
        s.destroy()


def test_phases_round_trip(sim):
    phases = np.zeros(sim.count, np.int32)
    phases[:8] = pbfcl.phase_body(0)
    sim.phases = phases
    assert np.array_equal(sim.phases, phases)
    assert sim.body_count == 1
    com, quat = sim.get_bodies()
    assert com.shape == (1, 3) and quat.shape == (1, 4)


def test_add_takes_the_next_ids(sim):
    before = sim.get_positions()
    new = scattered(10, 4)
    ids = sim.add(new, velocities=np.ones((10, 3), np.float32))
    assert ids == range(len(before), len(before) + 10)
    x = sim.positions
    assert np.array_equal(x[: len(before)], before)
    assert np.array_equal(x[ids.start:ids.stop], new)
    assert np.array_equal(sim.velocities[ids.start:ids.stop], np.ones((10, 3), np.float32))


def test_remove_closes_the_gaps(sim):
    sim.positions = scattered(sim.count, 5)
    before = sim.positions
    sim.remove(np.array([1, 3, 400]))
    assert np.array_equal(sim.positions, np.delete(before, [1, 3, 400], axis=0))


def test_out_reads_into_the_callers_array(sim):
    out = np.empty((sim.count, 3), np.float32)
    got = sim.get_positions(out=out)
    assert got is out
    assert np.array_equal(out, sim.positions)
    rho = np.empty(sim.count, np.float32)
    assert sim.get_densities(out=rho) is rho


def test_lossless_conversions_are_taken(sim):
    """float16 positions, int64 phases that fit and Fortran order convert without loss."""
    x = scattered(sim.count, 6)
    sim.set_positions(np.asfortranarray(x))
    assert np.array_equal(sim.positions, x)
    sim.set_phases(np.zeros(sim.count, np.int64))
    assert np.array_equal(sim.phases, np.zeros(sim.count, np.int32))


def test_scene_from_a_dict_equals_its_file(context):
    """A dict with a scene file's keys makes the same solver as the file."""
    import json
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "scenes", "drop.json")
    with open(path) as f:
        scene = json.load(f)
    with pbfcl.Solver(path, particles=400, context=context) as a, \
            pbfcl.Solver(scene, particles=400, context=context) as b:
        assert a.params.as_dict() == b.params.as_dict()
        assert a.positions.tobytes() == b.positions.tobytes()
