"""Parameters as attributes: the table's names, ranges and help come through, and a value set
from Python is the one the solver uses."""
import numpy as np

import pbfcl


def test_table_comes_through():
    table = pbfcl.parameters()
    assert table["viscosity"]["flag"] == "--viscosity"
    assert table["dt"]["range"] == "a number > 0 and <= 1"
    assert table["substeps"]["integer"] is True
    assert "gravity" in table and "particle_radius" in table


def test_value_reads_back(context):
    with pbfcl.Solver("drop", particles=300, context=context) as s:
        s.params.viscosity = 0.125
        s.params.method = "pbf"
        s.params.update({"iterations": 6}, gravity=(0, -1, 0))
        assert s.params.viscosity == 0.125
        assert s.params.iterations == 6
        assert s.params.gravity == (0, -1, 0)
        assert set(dir(s.params)) >= set(pbfcl.parameters())


def fall(context, **params):
    """The mean height of a dam break after 10 frames with params set from Python."""
    with pbfcl.Solver("dam-break", particles=500, context=context) as s:
        for name, value in params.items():
            setattr(s.params, name, value)
        y0 = s.positions[:, 1].mean()
        for _ in range(10):
            s.step()
        return s.positions[:, 1].mean() - y0


def test_gravity_set_from_python_takes_effect(context):
    down = fall(context)
    up = fall(context, gravity=(0.0, 9.81, 0.0))
    assert down < -0.01 and up > 0.01


def test_substeps_set_from_python_take_effect(context):
    with pbfcl.Solver("dam-break", particles=500, context=context) as s:
        s.params.substeps = 7
        t = s.step(timed=True)
        assert t["substeps"] >= 7 and s.stats()["substeps"] == t["substeps"]
        assert t["total"] > 0 and set(t) >= {"predict", "solve", "total", "kernels"}


def test_params_at_creation_take_effect(context):
    with pbfcl.Solver("dam-break", context=context,
                      params={"particle_radius": 0.04, "viscosity": 0.25}) as s:
        assert np.isclose(s.params.particle_radius, 0.04)
        assert s.params.viscosity == 0.25
        assert s.count < 2000  # the scene's own radius would give more
