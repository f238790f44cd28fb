"""A 60-frame dam break through Python equals the same run through the pbfcl program (`pbfcl
run`) on the same device bit for bit: every step's statistics and the last frame's positions,
velocities and densities."""
import csv
import os
import subprocess

import numpy as np

import pbfcl

STEPS = 60
PARTICLES = 2000


def read_ply(path):
    """The vertices of a binary PLY that `pbfcl run --export` writes, as a structured array."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode("ascii").splitlines()
    count = next(int(line.split()[2]) for line in header if line.startswith("element vertex"))
    types = {"float": "<f4", "uint": "<u4", "int": "<i4"}
    fields = [(line.split()[2], types[line.split()[1]]) for line in header
              if line.startswith("property")]
    return np.frombuffer(data, dtype=np.dtype(fields), count=count, offset=end)


def run_program(program, device, folder):
    stats = os.path.join(folder, "stats.csv")
    subprocess.run([program, "run", "--scene", "dam-break", "--particles", str(PARTICLES),
                    "--steps", str(STEPS), "--device", str(device), "--export",
                    os.path.join(folder, "frames"), "--every", str(STEPS), "--stats", stats,
                    "--quiet"], check=True)
    with open(stats, newline="") as f:
        rows = list(csv.DictReader(f))
    return rows, read_ply(os.path.join(folder, "frames", f"frame_{STEPS:05d}.ply"))


# the statistics' names beside the CSV's columns (the file keeps its former spelling)
COLUMNS = (("kinetic_energy", "kinetic_energy"), ("density_error_avg", "density_error_avg"),
           ("density_error_max", "density_error_max"), ("max_speed", "max_speed"),
           ("neighbours_avg", "neighbors_avg"))


def test_dam_break_matches_program(program, device, context, tmp_path):
    rows, frame = run_program(program, device, str(tmp_path))
    sim = pbfcl.Solver("dam-break", particles=PARTICLES, context=context)
    try:
        for step in range(1, STEPS + 1):
            sim.step()
            stats = sim.stats()
            row = rows[step - 1]
            assert int(row["step"]) == step
            for key, column in COLUMNS:  # the program writes them as %.9g
                assert f"{stats[key]:.9g}" == row[column], (step, key)
            assert stats["neighbours_max"] == int(row["neighbors_max"])
        assert np.array_equal(frame["id"], np.arange(sim.count))
        x, v, rho = sim.positions, sim.velocities, sim.densities
    finally:
        sim.destroy()
    assert x.tobytes() == np.stack([frame["x"], frame["y"], frame["z"]], axis=1).tobytes()
    assert v.tobytes() == np.stack([frame["vx"], frame["vy"], frame["vz"]], axis=1).tobytes()
    assert rho.tobytes() == np.ascontiguousarray(frame["density"]).tobytes()
