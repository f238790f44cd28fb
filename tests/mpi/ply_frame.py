"""The particles of one of pbfcl's binary PLY frames, for the MPI tests' scripts."""
import struct


def read(path):
    """Returns ({id: (x, y, z)}, [id of each vertex in file order]) of frame file path."""
    head, body = open(path, "rb").read().split(b"end_header\n", 1)
    lines = head.decode().splitlines()
    n = int(next(l.split()[2] for l in lines if l.startswith("element vertex")))
    props = [l.split() for l in lines if l.startswith("property")]
    fmt = "<" + "".join({"float": "f", "uint": "I", "int": "i"}[p[1]] for p in props)
    names = [p[2] for p in props]
    rows = [struct.unpack_from(fmt, body, i * struct.calcsize(fmt)) for i in range(n)]
    k = names.index("id")
    return {r[k]: r[:3] for r in rows}, [r[k] for r in rows]
