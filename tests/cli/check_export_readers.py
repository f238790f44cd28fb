#!/usr/bin/env python3
"""The frames of `pbfcl run --export` read by real readers from Debian's packages, not by our
own parser: VTK's XML reader (python3-vtk9) for .vtu frames and the .pvd collection, and meshio
(python3-meshio) for PLY. Checks that every particle arrives with its velocity (3 components),
density and id, one vertex cell each (what ParaView draws by default), the simulated time in
the collection and in each frame, the real density at step 0, --up z as a rotation, that
PLY and VTK frames of the same run hold the same values particle by particle (by id), and for
a scene with bodies the phase and body of each particle and bodies.csv, whose rows agree with
the bodies' particles in the frames (centre, mean velocity, angular momentum = I omega), and
for a scene with an emitter and a drain that ids are never reused: a drained id never comes
back and each emitted particle gets an id above every earlier one.

Exit 0: passed; 1: failed; 77: skipped (a reader or an OpenCL device is missing; the reason
is printed). Run by ctest as test_export_readers with PBFCL_PROGRAM set."""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SKIP = 77


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


try:
    import numpy as np
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridReader
except ImportError as e:
    skip("VTK's Python reader is missing (apt-get install python3-vtk9): %s" % e)
try:
    import meshio
except ImportError as e:
    skip("meshio is missing (apt-get install python3-meshio): %s" % e)

PROGRAM = os.environ.get("PBFCL_PROGRAM")
if not PROGRAM:
    print("PBFCL_PROGRAM is not set: run this test through ctest")
    sys.exit(1)

failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def run(out_dir, *args, scene="dam-break", particles="1500", steps="4", every="2"):
    cmd = [PROGRAM, "run", "--scene", scene, "--steps", steps, "--every", every, "--export",
           out_dir, "--quiet"] + (["--particles", particles] if particles else []) + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        if "OpenCL" in p.stderr and "device" in p.stderr:
            skip("no OpenCL device to run pbfcl on: " + p.stderr.strip())
        print(p.stderr)
        check(False, "pbfcl %s exits 0 (got %d)" % (" ".join(args), p.returncode))
        sys.exit(1)


def read_vtu(path):
    r = vtkXMLUnstructuredGridReader()
    r.SetFileName(path)
    r.Update()
    check(r.GetErrorCode() == 0, "%s: VTK reads it without error" % os.path.basename(path))
    g = r.GetOutput()
    pd = g.GetPointData()
    arrays = {pd.GetArrayName(i): vtk_to_numpy(pd.GetArray(i)) for i in range(pd.GetNumberOfArrays())}
    cells = [g.GetCellType(i) for i in range(g.GetNumberOfCells())]
    time = g.GetFieldData().GetArray("TimeValue")
    return {"points": vtk_to_numpy(g.GetPoints().GetData()), "arrays": arrays, "cells": cells,
            "ncomp": {k: pd.GetArray(k).GetNumberOfComponents() for k in arrays},
            "time": time.GetValue(0) if time else None}


def by_id(points, arrays):
    order = np.argsort(arrays["id"])
    return points[order], {k: v[order] for k, v in arrays.items()}


with tempfile.TemporaryDirectory(prefix="pbfcl_readers_") as tmp:
    vtk_dir, z_dir, ply_dir = (os.path.join(tmp, d) for d in ("vtk", "vtk_z", "ply"))
    run(vtk_dir, "--format", "vtk")
    run(z_dir, "--format", "vtk", "--up", "z")
    run(ply_dir, "--format", "ply")

    # the collection: every frame, its file, its simulated time (dt = 1/60 s)
    root = ET.parse(os.path.join(vtk_dir, "frames.pvd")).getroot()
    sets = root.findall("./Collection/DataSet")
    check(root.get("type") == "Collection", "frames.pvd is a VTK collection")
    check([d.get("file") for d in sets] == ["frame_00000.vtu", "frame_00002.vtu", "frame_00004.vtu"],
          "frames.pvd lists the frames of steps 0, 2, 4")
    frames = {}
    for d in sets:
        step = int(d.get("file")[6:11])
        f = read_vtu(os.path.join(vtk_dir, d.get("file")))
        frames[step] = f
        n = len(f["points"])
        check(abs(float(d.get("timestep")) - step / 60.0) < 1e-6, "step %d: pvd time %s" % (step, d.get("timestep")))
        check(f["time"] is not None and abs(f["time"] - step / 60.0) < 1e-6, "step %d: TimeValue %s" % (step, f["time"]))
        check(n > 1000 and len(f["cells"]) == n and set(f["cells"]) == {1},
              "step %d: %d points, one VTK_VERTEX cell each" % (step, n))
        check(f["ncomp"] == {"velocity": 3, "density": 1, "id": 1, "phase": 1, "body": 1},
              "step %d: arrays velocity (3), density, id, phase, body: %s" % (step, f["ncomp"]))
        check(np.all(f["arrays"]["phase"] == 0) and np.all(f["arrays"]["body"] == -1),
              "step %d: a scene without bodies is all fluid (phase 0, body -1)" % step)
        check(sorted(f["arrays"]["id"].tolist()) == list(range(n)), "step %d: ids are 0..n-1, each once" % step)
    d0 = frames[0]["arrays"]["density"]
    check(np.all(d0 > 300) and np.all(d0 < 1200) and np.mean(d0 != 1000.0) > 0.5,
          "step 0: real densities %.1f..%.1f, not the placeholder 1000" % (d0.min(), d0.max()))
    v4 = frames[4]["arrays"]["velocity"]
    check(np.abs(v4).max() > 0.01, "step 4: the fluid moves (|v| up to %.3f m/s)" % np.abs(v4).max())

    # --up z: the same particles, rotated (x, y, z) -> (x, -z, y)
    zf = read_vtu(os.path.join(z_dir, "frame_00004.vtu"))
    py, ay = by_id(frames[4]["points"], frames[4]["arrays"])
    pz, az = by_id(zf["points"], zf["arrays"])
    rot = np.stack([py[:, 0], -py[:, 2], py[:, 1]], axis=1)
    vrot = np.stack([ay["velocity"][:, 0], -ay["velocity"][:, 2], ay["velocity"][:, 1]], axis=1)
    check(np.array_equal(pz, rot) and np.array_equal(az["velocity"], vrot),
          "--up z writes (x, -z, y) for positions and velocities")

    # PLY through meshio: the same values as the VTK frame of the same step, by id
    m = meshio.read(os.path.join(ply_dir, "frame_00004.ply"))
    check(set(m.point_data) >= {"vx", "vy", "vz", "density", "id"},
          "PLY: meshio finds vx vy vz density id: %s" % sorted(m.point_data))
    pp, ap = by_id(m.points.astype(np.float32), {k: np.asarray(v) for k, v in m.point_data.items()})
    vel = np.stack([ap["vx"], ap["vy"], ap["vz"]], axis=1)
    check(np.array_equal(pp, py) and np.array_equal(vel, ay["velocity"]) and
          np.array_equal(ap["density"], ay["density"]),
          "PLY and VTK frames of step 4 agree particle by particle")
    with open(os.path.join(ply_dir, "frame_00004.ply"), "rb") as f:
        header = f.read(400).split(b"end_header")[0].decode()
    check("comment written by pbfcl" in header and "comment step 4 time" in header,
          "PLY header comments give the version, step and time")

    # a scene with bodies: phase and body per particle, and bodies.csv
    b_dir, bz_dir, bp_dir = (os.path.join(tmp, d) for d in ("bodies", "bodies_z", "bodies_ply"))
    run(b_dir, "--format", "vtk", scene="dam-break-bodies", particles="2000")
    run(bz_dir, "--format", "vtk", "--up", "z", scene="dam-break-bodies", particles="2000")
    run(bp_dir, "--format", "ply", scene="dam-break-bodies", particles="2000")
    bframes = {s: read_vtu(os.path.join(b_dir, "frame_%05d.vtu" % s)) for s in (0, 2, 4)}
    for step, f in bframes.items():
        ph, bd = f["arrays"]["phase"].astype(np.int64), f["arrays"]["body"].astype(np.int64)
        check(np.array_equal(bd, ph - 1), "bodies step %d: body = phase - 1 for every particle" % step)
        sizes = [int(np.sum(ph == b + 1)) for b in range(3)]
        check(set(np.unique(ph).tolist()) == {0, 1, 2, 3} and min(sizes) >= 4,
              "bodies step %d: fluid and bodies 0, 1, 2 of %s particles" % (step, sizes))
    with open(os.path.join(b_dir, "bodies.csv")) as f:
        lines = f.read().splitlines()
    check(lines[0] == "step,time,body,x,y,z,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz",
          "bodies.csv header: %s" % lines[0])
    rows = np.array([[float(x) for x in l.split(",")] for l in lines[1:]])
    check(rows.shape == (9, 16) and rows[:, 0].tolist() == [0, 0, 0, 2, 2, 2, 4, 4, 4] and
          rows[:, 2].tolist() == [0, 1, 2] * 3,
          "bodies.csv: a row per body (0, 1, 2) at each exported step (0, 2, 4)")
    for row in rows:
        step, body = int(row[0]), int(row[2])
        f = bframes[step]
        sel = f["arrays"]["phase"] == body + 1
        x, v = f["points"][sel].astype(np.float64), f["arrays"]["velocity"][sel].astype(np.float64)
        c, vm = x.mean(axis=0), v.mean(axis=0)
        r, u = x - c, v - vm
        L = np.cross(r, u).sum(axis=0)
        I = np.eye(3) * np.sum(r * r) - r.T @ r
        Iw = I @ row[13:16]
        scale = max(np.linalg.norm(L), 1e-3 * np.linalg.norm(I))
        check(abs(row[1] - step / 60.0) < 1e-6 and np.abs(row[3:6] - c).max() < 2e-3 and
              abs(np.linalg.norm(row[6:10]) - 1.0) < 1e-4 and np.abs(row[10:13] - vm).max() < 1e-4 and
              np.abs(Iw - L).max() <= 1e-3 * scale + 1e-9,
              "bodies.csv step %d body %d: time, centre, unit quaternion, mean velocity, I w = L" % (step, body))
    with open(os.path.join(bz_dir, "bodies.csv")) as f:
        zrows = np.array([[float(x) for x in l.split(",")] for l in f.read().splitlines()[1:]])
    rot = lambda a: np.stack([a[:, 0], -a[:, 2], a[:, 1]], axis=1)
    check(np.allclose(zrows[:, 3:6], rot(rows[:, 3:6]), atol=1e-6) and
          np.allclose(zrows[:, 10:13], rot(rows[:, 10:13]), atol=1e-6) and
          np.allclose(zrows[:, 6:9], rot(rows[:, 6:9]), atol=1e-6) and np.allclose(zrows[:, 9], rows[:, 9]),
          "bodies.csv with --up z: positions, velocities and the quaternion's axis as (x, -z, y)")
    mb = meshio.read(os.path.join(bp_dir, "frame_00004.ply"))
    pb, ab = by_id(mb.points.astype(np.float32), {k: np.asarray(v) for k, v in mb.point_data.items()})
    vb, avb = by_id(bframes[4]["points"], bframes[4]["arrays"])
    check({"phase", "body"} <= set(mb.point_data) and np.array_equal(ab["phase"], avb["phase"]) and
          np.array_equal(ab["body"], avb["body"]) and np.array_equal(pb, vb),
          "PLY with bodies: meshio reads phase and body, equal to the VTK frame's")

    # an emitter and a drain: ids are never reused
    scene = os.path.join(tmp, "flow.json")
    with open(scene, "w") as f:
        f.write('{"domain": {"min": [0,0,0], "max": [1,1,1]}, "particle_radius": 0.02, '
                '"gravity": [0,0,0], "fluid": [{"min": [0,0,0], "max": [0.1,0.1,0.1]}], '
                '"emitters": [{"center": [0.5,0.5,0.5], "radius": 0.05, "velocity": [1,0,0], '
                '"rate": 100, "count": 60}], '
                '"drains": [{"box": {"min": [0.8,0,0], "max": [1,1,1]}}]}')
    f_dir = os.path.join(tmp, "flow")
    run(f_dir, "--format", "vtk", scene=scene, particles=None, steps="50", every="5")
    seen, gone, top, counts = set(), set(), -1, []
    for step in range(0, 51, 5):
        ids = read_vtu(os.path.join(f_dir, "frame_%05d.vtu" % step))["arrays"]["id"].tolist()
        now = set(ids)
        new = now - seen
        check(len(now) == len(ids) and not (now & gone) and all(i > top for i in new),
              "flow step %d: %d particles, ids unique, none drained comes back, new ids above %d"
              % (step, len(ids), top))
        gone |= seen - now
        seen |= now
        top = max(seen)
        counts.append(len(ids))
    check(max(counts) > counts[0] and counts[-1] < max(counts) and len(gone) > 0 and top == 27 + 60 - 1,
          "flow: the count rose (emitter) and fell (drain, %d gone); the last id is 27 + 60 - 1" % len(gone))

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
