#!/usr/bin/env python3
"""The cloth, ropes and colliders of `pbfcl run --export` read by real readers (python3-vtk9's
XML and PLY readers, meshio), not by our own parser: cloth-drape's cloth as a mesh of 441
vertices and 800 triangles (21 x 21 particles, two triangles per cell) per frame, in PLY (meshio
and VTK) and VTK polydata (.vtp, part 1 of its time in frames.pvd), each vertex at the position,
and with the velocity, of the particle of the same id in the same step's frame, --up z turning
both alike; rope-bridge's rope as one VTK polyline through its 41 particles in order along the
rope; a scene with colliders: shape_NN.obj per shape, read by meshio as a closed surface, and
shapes.csv with a row per shape per frame.

Exit 0: passed; 1: failed; 77: skipped (a reader or an OpenCL device is missing). Run by ctest
as test_export_meshes with PBFCL_PROGRAM set."""
import csv
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
    from vtkmodules.vtkIOXML import vtkXMLPolyDataReader, vtkXMLUnstructuredGridReader
    from vtkmodules.vtkIOPLY import vtkPLYReader
except ImportError as e:
    skip("VTK's Python readers are missing (apt-get install python3-vtk9): %s" % e)
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


def run(out_dir, scene, *args, steps="4", every="2"):
    cmd = [PROGRAM, "run", "--scene", scene, "--steps", steps, "--every", every, "--export",
           out_dir, "--quiet"] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        if "OpenCL" in p.stderr and "device" in p.stderr:
            skip("no OpenCL device to run pbfcl on: " + p.stderr.strip())
        print(p.stderr)
        check(False, "pbfcl run --scene %s %s exits 0 (got %d)" % (scene, " ".join(args), p.returncode))
        sys.exit(1)


def read_xml(reader_class, path):
    r = reader_class()
    r.SetFileName(path)
    r.Update()
    check(r.GetErrorCode() == 0, "%s: VTK reads it without error" % os.path.basename(path))
    return r.GetOutput()


def point_arrays(g):
    pd = g.GetPointData()
    return {pd.GetArrayName(i): vtk_to_numpy(pd.GetArray(i)) for i in range(pd.GetNumberOfArrays())}


def cells(cell_array):
    """The cells of a vtkCellArray as lists of point indices."""
    offsets = vtk_to_numpy(cell_array.GetOffsetsArray())
    conn = vtk_to_numpy(cell_array.GetConnectivityArray())
    return [conn[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]


def frame_by_id(path):
    g = read_xml(vtkXMLUnstructuredGridReader, path)
    a = point_arrays(g)
    pts = vtk_to_numpy(g.GetPoints().GetData())
    return {int(i): (pts[k], a["velocity"][k]) for k, i in enumerate(a["id"])}


with tempfile.TemporaryDirectory(prefix="pbfcl_meshes_") as tmp:
    vtk_dir, z_dir, ply_dir, rope_dir, shape_dir = (
        os.path.join(tmp, d) for d in ("vtk", "vtk_z", "ply", "rope", "shapes"))
    run(vtk_dir, "cloth-drape", "--format", "vtk")
    run(z_dir, "cloth-drape", "--format", "vtk", "--up", "z")
    run(ply_dir, "cloth-drape", "--format", "ply")

    # the collection: each step's frame (part 0) and mesh (part 1) at the same time
    sets = ET.parse(os.path.join(vtk_dir, "frames.pvd")).getroot().findall("./Collection/DataSet")
    listed = [(d.get("file"), d.get("part")) for d in sets]
    want = []
    for s in (0, 2, 4):
        want += [("frame_%05d.vtu" % s, "0"), ("mesh_%05d.vtp" % s, "1")]
    check(listed == want, "frames.pvd lists each step's frame as part 0 and its mesh as part 1")
    check(all(sets[2 * i].get("timestep") == sets[2 * i + 1].get("timestep") for i in range(3)),
          "frames.pvd gives a mesh its frame's time")

    for step in (0, 4):
        m = read_xml(vtkXMLPolyDataReader, os.path.join(vtk_dir, "mesh_%05d.vtp" % step))
        a = point_arrays(m)
        pts = vtk_to_numpy(m.GetPoints().GetData())
        polys = cells(m.GetPolys())
        check(m.GetNumberOfPoints() == 441 and len(polys) == 800 and all(len(c) == 3 for c in polys),
              "vtp step %d: 441 points and 800 triangles (%d, %d)" % (step, m.GetNumberOfPoints(), len(polys)))
        check(m.GetLines().GetNumberOfCells() == 0, "vtp step %d: no rope lines in a cloth" % step)
        used = sorted({i for c in polys for i in c})
        check(used == list(range(441)), "vtp step %d: the triangles use every vertex" % step)
        frame = frame_by_id(os.path.join(vtk_dir, "frame_%05d.vtu" % step))
        same = all(np.array_equal(pts[k], frame[int(i)][0]) and np.array_equal(a["velocity"][k], frame[int(i)][1])
                   for k, i in enumerate(a["id"]))
        check(same, "vtp step %d: each vertex at the position and velocity of the particle of its id" % step)
        if step == 4:
            # the triangles' orientation: each cell's two triangles share its diagonal, so every
            # interior edge is used by exactly two triangles
            edges = {}
            for c in polys:
                for e in range(3):
                    key = tuple(sorted((c[e], c[(e + 1) % 3])))
                    edges[key] = edges.get(key, 0) + 1
            check(sorted(set(edges.values())) == [1, 2] and sum(1 for v in edges.values() if v == 1) == 80,
                  "vtp: a sheet whose 80 border edges are used once, every other twice")
            vtp4 = (pts.copy(), a["id"].copy(), polys)

    # --up z: the same mesh turned (x, y, z) -> (x, -z, y)
    mz = read_xml(vtkXMLPolyDataReader, os.path.join(z_dir, "mesh_00004.vtp"))
    pz, iz = vtk_to_numpy(mz.GetPoints().GetData()), point_arrays(mz)["id"]
    py, iy, _ = vtp4
    check(np.array_equal(iz, iy) and np.array_equal(pz, np.stack([py[:, 0], -py[:, 2], py[:, 1]], axis=1)),
          "--up z turns the mesh as the frames")

    # PLY through meshio and VTK: the same triangles over the same positions
    mp = meshio.read(os.path.join(ply_dir, "mesh_00004.ply"))
    tris = [c.data for c in mp.cells if c.type == "triangle"]
    check(len(tris) == 1 and len(tris[0]) == 800, "PLY: meshio reads 800 triangles")
    ids = np.asarray(mp.point_data["id"])
    check(np.array_equal(ids, iy) and np.array_equal(mp.points.astype(np.float32), py),
          "PLY: the same vertices (ids, positions) as the VTK mesh of step 4")
    check(np.array_equal(np.asarray(tris[0]), np.asarray(vtp4[2])), "PLY: the same triangles as the VTK mesh")
    pr = vtkPLYReader()
    pr.SetFileName(os.path.join(ply_dir, "mesh_00004.ply"))
    pr.Update()
    check(pr.GetOutput().GetNumberOfPolys() == 800 and pr.GetOutput().GetNumberOfPoints() == 441,
          "PLY: VTK's PLY reader reads 441 points and 800 polygons")

    # rope-bridge: one polyline through the rope's 41 particles in order
    run(rope_dir, "rope-bridge", "--format", "vtk")
    r = read_xml(vtkXMLPolyDataReader, os.path.join(rope_dir, "mesh_00004.vtp"))
    lines = cells(r.GetLines())
    rid = point_arrays(r)["id"]
    check(len(lines) == 1 and len(lines[0]) == 41 and r.GetPolys().GetNumberOfCells() == 0,
          "rope: one polyline of 41 points, no triangles (%s)" % [len(c) for c in lines])
    if len(lines) == 1:
        along = [int(rid[k]) for k in lines[0]]
        check(along == list(range(along[0], along[0] + 41)) or along == list(range(along[0], along[0] - 41, -1)),
              "rope: the polyline runs through the rope's particles in order")
        pts = vtk_to_numpy(r.GetPoints().GetData())[lines[0]]
        seg = np.linalg.norm(np.diff(pts, axis=0), axis=1)
        check(seg.max() < 0.03, "rope: consecutive points 0.02 m apart, no bend or tether (longest %.4f m)" % seg.max())

    # colliders: an OBJ surface per shape, closed, and a CSV row per shape per frame
    scene = os.path.join(tmp, "colliders.json")
    with open(scene, "w") as f:
        f.write('{"name": "shapes", "domain": {"min": [0, 0, 0], "max": [1, 0.6, 0.4]}, '
                '"particle_radius": 0.02, "fluid": [{"min": [0, 0, 0], "max": [0.2, 0.2, 0.4]}], '
                '"colliders": [{"type": "sphere", "radius": 0.08, "position": [0.5, 0.1, 0.2]}, '
                '{"type": "box", "half_extents": [0.05, 0.08, 0.15], "position": [0.8, 0.08, 0.2], '
                '"angular_velocity": [0, 1, 0], "velocity": [0, 0.5, 0]}]}')
    run(shape_dir, scene, "--format", "ply")
    for i, (kind, tris_want) in enumerate((("sphere", 32 * 16 * 2 - 2 * 32), ("box", 12))):
        o = meshio.read(os.path.join(shape_dir, "shape_%02d.obj" % i))
        t = [c.data for c in o.cells if c.type == "triangle"]
        check(len(t) == 1 and len(t[0]) == tris_want, "shape_%02d.obj: meshio reads %d triangles of a %s" % (i, tris_want, kind))
    with open(os.path.join(shape_dir, "shapes.csv")) as f:
        rows = list(csv.DictReader(f))
    check([(r["step"], r["shape"], r["type"]) for r in rows] ==
          [(s, i, t) for s in ("0", "2", "4") for i, t in (("0", "sphere"), ("1", "box"))],
          "shapes.csv: a row per shape per frame, with its kind")
    box = [r for r in rows if r["shape"] == "1"]
    dt = 1.0 / 60.0
    for r in box:
        t = int(r["step"]) * dt
        y, qy, qw = float(r["y"]), float(r["qy"]), float(r["qw"])
        check(abs(y - (0.08 + 0.5 * t)) < 1e-5 and abs(qy - np.sin(t / 2)) < 1e-5 and abs(qw - np.cos(t / 2)) < 1e-5,
              "shapes.csv step %s: the box moved by its velocities (y %.6f, q %.6f %.6f)" % (r["step"], y, qy, qw))

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("all checks passed")
