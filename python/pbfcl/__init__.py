"""pbfcl: Position Based Fluids and unified particles on OpenCL, from Python.

The package wraps the public C API (include/pbfcl.h, docs/API.md): devices, contexts, solvers
made from built-in scenes, JSON scene files or dicts with the same keys (docs/SCENES.md), the
parameters as attributes, stepping, statistics, per-stage timers, checkpoints, particle
data as NumPy arrays in the caller's order (row k is particle k), cloth and ropes (distance
constraints, solid groups, triangles, attachments to shapes and bodies) by particle index, and
collision shapes by id.
docs/PYTHON.md has the whole story.

    import pbfcl
    sim = pbfcl.Solver("dam-break", particles=20000)
    sim.params.viscosity = 0.1
    for _ in range(60):
        sim.step()
    x = sim.positions            # float32 (count, 3)
"""

import json
import os
import tempfile

from ._pbfcl import (  # noqa: F401  (the public names of the package)
    ATTACH_BODY,
    ATTACH_SHAPE,
    HEADER_VERSION,
    MAX_GROUPS,
    MAX_SHAPES,
    PHASE_FLUID,
    PHASE_STATIC,
    ArgumentError,
    Context,
    Error,
    Params,
    Warning,
    devices,
    find_device,
    parameters,
    phase_solid_group,
    scene_is_file,
    version,
)
from ._pbfcl import Solver as _Solver

__all__ = [
    "ArgumentError", "Context", "Error", "Params", "Solver", "Warning", "ATTACH_BODY",
    "ATTACH_SHAPE", "MAX_GROUPS",
    "MAX_SHAPES", "PHASE_FLUID", "PHASE_STATIC", "devices", "find_device", "parameters",
    "scene_is_file", "version", "phase_body", "phase_solid_group",
]
__version__ = version()


def phase_body(b):
    """The phase of body b's particles (b + 1), for Solver.set_phases."""
    return b + 1


def _absolute_meshes(scene, base_dir):
    """A copy of scene whose mesh files are absolute, relative ones taken from base_dir."""
    scene = json.loads(json.dumps(scene))  # a deep copy that also checks it is JSON
    for group in ("bodies", "obstacles"):
        for item in scene.get(group, []) or []:
            mesh = item.get("mesh") if isinstance(item, dict) else None
            if isinstance(mesh, dict) and isinstance(mesh.get("file"), str):
                mesh["file"] = os.path.join(base_dir, mesh["file"])
    return scene


_shared_contexts = {}


def _shared_context(device):
    """The Context that solvers made without one share on `device`, so that the second and
    later compile nothing (a context keeps the programs it built); a new one once the last was
    destroyed."""
    key = (type(device).__name__, device)
    context = _shared_contexts.get(key)
    if context is None or not context.alive:
        context = _shared_contexts[key] = Context(device=device)
    return context


class Solver(_Solver):
    """Solver(scene=None, *, particles=None, capacity=None, params=None, context=None, device=None)

    A particle solver. scene: a built-in scene's name ('dam-break', 'double-dam-break',
    'drop', 'dam-break-bodies', 'soft-ball', 'fountain', 'cloth-drape', 'rope-bridge', 'flag',
    'pour', 'mesh-container', 'water-balloon'), a JSON scene file, or a dict with the
    keys of a scene file (docs/SCENES.md; relative mesh files are taken from the current
    folder); None makes an empty solver with room for `capacity` particles. particles: about
    how many particles to fill the scene with (None: the scene's own radius). params: a dict
    of parameter overrides applied before the fill (pbfcl.parameters() lists them). context: a
    Context to run on; without one the solver runs on a context shared by every solver made
    without one on the same `device` (an index from pbfcl.devices() or part of a device's name;
    None: the first GPU, else the first device), so only the first of them compiles kernels.

    Every method raises pbfcl.Error (pbfcl.ArgumentError, also a ValueError, for a refused
    argument) with the library's message, and raises instead of crashing once the solver or
    its context was destroyed.
    """

    def __init__(self, scene=None, *, particles=None, capacity=None, params=None, context=None,
                 device=None):
        if context is None:
            context = _shared_context(device)
        elif device is not None:
            raise ValueError("give either context or device, not both")
        kwargs = {"particles": -1 if particles is None else particles,
                  "capacity": 0 if capacity is None else capacity, "params": params}
        if isinstance(scene, dict):
            text = json.dumps(_absolute_meshes(scene, os.getcwd()))
            with tempfile.TemporaryDirectory(prefix="pbfcl-scene-") as folder:
                path = os.path.join(folder, "scene.json")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                super().__init__(context, path, **kwargs)
            return
        if scene is not None and not isinstance(scene, (str, os.PathLike)):
            raise TypeError("scene must be a built-in scene's name, a JSON file's path or a dict, "
                            f"not {type(scene).__name__}")
        super().__init__(context, None if scene is None else os.fspath(scene), **kwargs)

    def save(self, path):
        """Writes save_state() to the file path, whole or not at all (a new file renamed over
        the old one only once it is complete)."""
        data = self.save_state()
        path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".pbfcl-state-", dir=folder)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise

    def load(self, path):
        """Restores a state written by save(path) (see load_state)."""
        with open(os.fspath(path), "rb") as f:
            self.load_state(f.read())

    def __repr__(self):
        if not self.alive:
            return "<pbfcl.Solver (destroyed)>"
        return f"<pbfcl.Solver {self.count} particles, capacity {self.capacity}>"
