"""No memory grows over many create, step and destroy cycles, nor over many calls of every
array, parameter and checkpoint method on one solver (resident set size after a warm-up,
with a generous bound). PBFCL_PY_CYCLES sets the create cycles (default 20: a solver's
creation builds its kernels, about 0.3 s on PoCL; 1000 for the long check)."""
import os

import numpy as np
import pytest

import pbfcl

MIB = 1 << 20


def rss():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        pytest.skip("no /proc/self/statm to read the resident set size from")


def test_create_step_destroy_cycles(context):
    cycles = int(os.environ.get("PBFCL_PY_CYCLES", "20"))
    x = np.random.default_rng(0).uniform(0.3, 0.7, (64, 3)).astype(np.float32)

    def cycle():
        s = pbfcl.Solver(capacity=64, context=context)
        s.add(x)
        s.step()
        s.stats()
        s.destroy()

    for _ in range(10):
        cycle()
    before = rss()
    for _ in range(cycles):
        cycle()
    assert rss() - before < 32 * MIB


def test_calls_on_one_solver(context):
    with pbfcl.Solver("drop", particles=4000, context=context) as s:
        out = np.empty((s.count, 3), np.float32)

        def calls(i):
            if i % 100 == 0:  # a step costs most; a leak per call shows without many
                s.step(timed=True)
            s.stats()
            s.set_positions(s.get_positions(out=out))
            s.velocities = s.velocities
            s.densities
            s.params.viscosity = 0.05
            s.params.as_dict()
            if i % 10 == 0:
                s.load_state(s.save_state())
            try:
                s.set_positions(np.zeros((1, 3)))
            except TypeError:
                pass

        for i in range(50):
            calls(i)
        before = rss()
        for i in range(1000):
            calls(i)
        assert rss() - before < 8 * MIB  # a leaked array of positions would be 48 MiB
