"""Misuse raises a Python exception with a message saying what is needed, or the library's
own message, and never crashes: wrong dtype or shape, NaN, a destroyed solver or context,
an unknown or out-of-range parameter, a bad scene, a corrupt checkpoint."""
import numpy as np
import pytest

import pbfcl


@pytest.fixture
def sim(context):
    s = pbfcl.Solver("dam-break", particles=300, context=context)
    yield s
    s.destroy()


def test_wrong_dtype_is_refused_with_the_dtype_needed(sim):
    with pytest.raises(TypeError, match="must be a float32 array.*float64"):
        sim.set_positions(np.zeros((sim.count, 3)))
    with pytest.raises(TypeError, match="must be a int32 array"):
        sim.set_phases(np.zeros(sim.count, np.float32))
    with pytest.raises(TypeError, match="out for positions must have dtype float32"):
        sim.get_positions(out=np.empty((sim.count, 3), np.float64))


def test_wrong_shape_is_refused_with_the_shape_needed(sim):
    n = sim.count
    with pytest.raises(ValueError, match=rf"shape \({n}, 3\).*got \({n - 1}, 3\)"):
        sim.set_positions(np.zeros((n - 1, 3), np.float32))
    with pytest.raises(ValueError, match=r"shape \(N, 3\)"):
        sim.add(np.zeros((4, 4), np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        sim.get_positions(out=np.empty((3, n), np.float32).T)


def test_nan_raises_the_librarys_message(sim):
    x = sim.positions
    x[7, 1] = np.nan
    with pytest.raises(pbfcl.ArgumentError, match=r"particle 7\) is not a finite number") as e:
        sim.set_positions(x)
    assert e.value.status == "PBFCL_ERR_BAD_ARGUMENT"
    with pytest.raises(ValueError, match="finite"):
        sim.params.viscosity = float("nan")


def test_destroyed_solver_raises(sim):
    sim.destroy()
    sim.destroy()  # again: nothing
    for call in (sim.step, sim.stats, lambda: sim.positions, lambda: sim.params.dt,
                 lambda: sim.set_positions(np.zeros((1, 3), np.float32)), sim.save_state):
        with pytest.raises(pbfcl.Error, match="destroyed") as e:
            call()
        assert e.value.status == "PBFCL_ERR_INVALID_HANDLE"
    assert not sim.alive


def test_destroyed_context_takes_its_solvers(device):
    ctx = pbfcl.Context(device=device)
    s = pbfcl.Solver("drop", particles=200, context=ctx)
    ctx.destroy()
    with pytest.raises(pbfcl.Error, match="destroyed"):
        s.step()
    with pytest.raises(pbfcl.Error, match="destroyed"):
        pbfcl.Solver("drop", context=ctx)
    s.destroy()  # its context already took it: nothing to do, no crash


def test_parameters_are_checked(sim):
    with pytest.raises(ValueError, match=r"dt = 2 is out of range: it must be a number > 0 and <= 1"):
        sim.params.dt = 2
    with pytest.raises(ValueError, match="substeps = 2.5 is out of range"):
        sim.params.substeps = 2.5
    with pytest.raises(AttributeError, match="unknown parameter 'viscosityy'"):
        sim.params.viscosityy = 1
    with pytest.raises(AttributeError, match="unknown parameter"):
        pbfcl.Solver("drop", context=sim.context, params={"no_such": 1})
    with pytest.raises(ValueError, match="gravity must be three numbers"):
        sim.params.gravity = (0, -9.81)
    with pytest.raises(TypeError, match="must be a number"):
        sim.params.iterations = "4"
    before = sim.params.as_dict()
    with pytest.raises(ValueError):
        sim.params.update(viscosity=0.2, iterations=-1)
    assert sim.params.as_dict() == before  # a refused update changes nothing


def test_bad_scene_raises_the_librarys_message(context, tmp_path):
    with pytest.raises(pbfcl.Error, match="no-such-scene"):
        pbfcl.Solver("no-such-scene", context=context)
    bad = tmp_path / "bad.json"
    bad.write_text('{"particle_radius": -1}')
    with pytest.raises(pbfcl.Error, match="domain: missing"):
        pbfcl.Solver(str(bad), context=context)
    with pytest.raises(ValueError, match="particles and particle_radius"):
        pbfcl.Solver("drop", particles=100, params={"particle_radius": 0.02}, context=context)
    with pytest.raises(TypeError, match="scene must be"):
        pbfcl.Solver(42, context=context)


def test_bad_checkpoint_is_refused(sim):
    data = bytearray(sim.save_state())
    with pytest.raises(ValueError, match="not a pbfcl Python checkpoint"):
        sim.load_state(b"hello")
    with pytest.raises(ValueError, match="cut short"):
        sim.load_state(bytes(data[:-10]))
    data[100] ^= 1
    with pytest.raises(ValueError, match="checksum"):
        sim.load_state(bytes(data))


def test_remove_checks_its_indices(sim):
    with pytest.raises(IndexError, match="out of range"):
        sim.remove([sim.count])
    with pytest.raises(TypeError, match="integers"):
        sim.remove(np.array([1.0]))
