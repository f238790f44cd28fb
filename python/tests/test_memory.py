"""No memory grows over 1,000 create, step and destroy cycles (issue 28), nor over many calls of
every array, parameter, checkpoint, cloth and shape method on one solver: the resident set
size after a warm-up, with a bound a leak of a few KiB per cycle exceeds, and the context's
OpenCL reference count (every buffer, program and queue made on the context retains it on
PoCL), which must come back to where it was. A context keeps the programs its first solver
built, so a cycle takes milliseconds (PBFCL_PY_CYCLES changes the count)."""
import ctypes
import ctypes.util
import os

import numpy as np
import pytest

import pbfcl

MIB = 1 << 20
CL_CONTEXT_REFERENCE_COUNT = 0x1080


def rss():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        pytest.skip("no /proc/self/statm to read the resident set size from")


def cl_context_refs(context):
    """The OpenCL reference count of the context's cl_context (clGetContextInfo), or None
    where the OpenCL library cannot be loaded through ctypes."""
    name = ctypes.util.find_library("OpenCL") or "libOpenCL.so.1"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    n = ctypes.c_uint(0)
    err = lib.clGetContextInfo(ctypes.c_void_p(context.cl_handles[0]),
                               CL_CONTEXT_REFERENCE_COUNT, ctypes.sizeof(n), ctypes.byref(n),
                               None)
    return n.value if err == 0 else None


def test_create_step_destroy_cycles(context):
    cycles = int(os.environ.get("PBFCL_PY_CYCLES", "1000"))
    x = np.random.default_rng(0).uniform(0.3, 0.7, (64, 3)).astype(np.float32)

    def cycle():
        s = pbfcl.Solver(capacity=64, context=context)
        s.add(x)
        s.step()
        s.stats()
        s.destroy()

    for _ in range(10):
        cycle()
    refs = cl_context_refs(context)
    before = rss()
    for _ in range(cycles):
        cycle()
    # a leaked solver of 64 particles holds about 750 KiB on PoCL (its buffers; a program is
    # megabytes): one leaked per cycle, or a 10 KiB piece of one, passes 8 MiB within 1,000
    assert rss() - before < 8 * MIB
    if refs is not None:
        assert cl_context_refs(context) == refs, "OpenCL objects on the context leaked"


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


def test_cloth_and_shape_calls(context):
    scene = {"domain": {"min": [0, 0, 0], "max": [1.2, 0.4, 1.2]}, "particle_radius": 0.01,
             "fluid": [{"min": [0, 0, 0], "max": [0.04, 0.02, 0.04]}],
             "cloth": [{"corner": [0.1, 0.2, 0.1], "u": [0.94, 0, 0], "v": [0, 0, 0.94],
                        "resolution": [48, 48], "mass": 0.5}]}
    with pbfcl.Solver(scene, context=context) as s:
        ids = np.arange(s.count - 48 * 48, s.count)
        forces = np.empty(s.distance_count, np.float32)
        w = s.inverse_masses

        def calls(i):
            if i % 100 == 0:
                s.step()
            pairs, rest, comp, tether = s.get_distances()
            s.set_distances(pairs, rest, comp, tether)
            s.get_distance_forces(out=forces)
            s.set_triangles(s.get_triangles())
            s.set_groups(ids, 0, w[ids])
            s.inverse_masses = s.inverse_masses
            s.particle_phases
            shape = s.create_shape("sphere", radius=0.05, position=(0.5, 0.1, 0.5))
            s.set_shape_motion(shape, position=(0.5, 0.12, 0.5), velocity=(0, 0.1, 0))
            s.get_shape_pose(shape)
            s.shape_contacts(shape)
            s.destroy_shape(shape)
            try:
                s.set_distances(pairs[:2], rest[:2] * -1)
            except pbfcl.ArgumentError:
                pass

        for i in range(50):
            calls(i)
        before = rss()
        for i in range(1000):
            calls(i)
        # one leaked copy of the constraints' pairs (about 13,500 x 8 bytes) per round would be
        # over 100 MiB
        assert rss() - before < 8 * MIB
