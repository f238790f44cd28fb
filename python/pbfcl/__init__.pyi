# Type stubs of the pbfcl package (the extension pbfcl._pbfcl and pbfcl/__init__.py).
import os
from typing import Any, Literal, Mapping, Optional, Sequence, Tuple, TypedDict, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str
HEADER_VERSION: int
PHASE_FLUID: int
PHASE_STATIC: int
MAX_SHAPES: int  # collision shapes per solver
MAX_GROUPS: int  # solid groups (cloths, ropes) per solver
ATTACH_SHAPE: int  # set_attachments' kind: held by a collision shape (its id)
ATTACH_BODY: int  # set_attachments' kind: held by a body (its index)

class Error(RuntimeError):
    """A pbfcl call failed; str(e) is the library's message."""
    status: str  # the status's name, e.g. "PBFCL_ERR_NO_DEVICE"

class ArgumentError(Error, ValueError):
    """The library refused an argument or parameter."""

class Warning(UserWarning): ...

def version() -> str: ...
def devices() -> list[str]: ...
def find_device(spec: Union[int, str]) -> int: ...
def parameters() -> dict[str, dict[str, Any]]: ...
def scene_is_file(name: str) -> bool: ...
def phase_body(b: int) -> int: ...
def phase_solid_group(g: int) -> int:
    """The phase a particle of solid group g reads as in Solver.get_particle_phases()."""

class Context:
    def __init__(self, device: Union[int, str, None] = None,
                 kernel_dir: Optional[str] = None) -> None: ...
    @property
    def device_name(self) -> str: ...
    @property
    def cl_handles(self) -> Tuple[int, int, int]:
        """(cl_context, cl_device_id, cl_command_queue) as integers, owned by the context."""
    @property
    def alive(self) -> bool: ...
    def destroy(self) -> None: ...
    def __enter__(self) -> "Context": ...
    def __exit__(self, *exc: object) -> None: ...

class Params:
    """Parameters as attributes: every name of pbfcl.parameters()."""
    method: str
    dt: float
    substeps: int
    iterations: int
    viscosity: float
    vorticity: float
    gravity: Tuple[float, float, float]
    domain_min: Tuple[float, float, float]
    domain_max: Tuple[float, float, float]
    particle_radius: float
    rest_density: float
    def __getattr__(self, name: str) -> Any: ...
    def __setattr__(self, name: str, value: Any) -> None: ...
    def as_dict(self) -> dict[str, Any]: ...
    def update(self, mapping: Optional[Mapping[str, Any]] = None, **values: Any) -> None: ...

Float3 = npt.NDArray[np.float32]
SceneArg = Union[str, os.PathLike[str], Mapping[str, Any], None]
Point = Union[Sequence[float], npt.NDArray[np.floating]]
RenderMode = Literal["fluid", "spheres"]
Indices = Union[Sequence[int], Sequence[Sequence[int]], npt.NDArray[np.integer]]
FloatColumn = Union[float, npt.ArrayLike]
ShapeKind = Literal["sphere", "capsule", "box", "convex", "mesh", "sdf"]

class ShapeContacts(TypedDict):
    force: npt.NDArray[np.float32]  # (3,), N, on the shape
    contacts: int
    inside: int

class Solver:
    def __init__(self, scene: SceneArg = None, *, particles: Optional[int] = None,
                 capacity: Optional[int] = None, params: Optional[Mapping[str, Any]] = None,
                 context: Optional[Context] = None,
                 device: Union[int, str, None] = None) -> None: ...
    count: int
    capacity: int
    params: Params
    timers: Optional[dict[str, float]]
    time: float
    frames: int
    alive: bool
    context: Context
    body_count: int
    positions: Float3
    velocities: Float3
    @property
    def densities(self) -> npt.NDArray[np.float32]: ...
    phases: npt.NDArray[np.int32]
    particle_phases: npt.NDArray[np.int32]
    inverse_masses: npt.NDArray[np.float32]
    @property
    def distance_count(self) -> int: ...
    @property
    def triangle_count(self) -> int: ...
    @property
    def inflatable_count(self) -> int: ...
    @property
    def shape_count(self) -> int: ...
    @property
    def attachment_count(self) -> int: ...
    def __len__(self) -> int: ...
    def step(self, dt: Optional[float] = None, timed: bool = False) -> Optional[dict[str, float]]: ...
    def stats(self) -> dict[str, Any]: ...
    def finish(self) -> None: ...
    def destroy(self) -> None: ...
    def get_positions(self, out: Optional[Float3] = None) -> Float3: ...
    def get_velocities(self, out: Optional[Float3] = None) -> Float3: ...
    def get_densities(self, out: Optional[npt.NDArray[np.float32]] = None) -> npt.NDArray[np.float32]: ...
    def get_phases(self, out: Optional[npt.NDArray[np.int32]] = None) -> npt.NDArray[np.int32]: ...
    def set_positions(self, a: npt.ArrayLike) -> None: ...
    def set_velocities(self, a: npt.ArrayLike) -> None: ...
    def set_phases(self, a: npt.ArrayLike) -> None: ...
    def get_particle_phases(self, out: Optional[npt.NDArray[np.int32]] = None) -> npt.NDArray[np.int32]: ...
    def set_particle_phases(self, a: npt.ArrayLike) -> None: ...
    def get_inverse_masses(self, out: Optional[npt.NDArray[np.float32]] = None) -> npt.NDArray[np.float32]: ...
    def set_inverse_masses(self, a: npt.ArrayLike) -> None: ...
    def set_distances(self, pairs: Indices, rest: npt.ArrayLike, compliance: FloatColumn = 0.0,
                      tether: Union[bool, npt.ArrayLike, None] = None) -> None:
        """Distance constraints: pairs uint32 (C, 2), rest float32 (C,) m, compliance m/N."""
    def get_distances(self) -> Tuple[npt.NDArray[np.uint32], npt.NDArray[np.float32],
                                     npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """(pairs (C, 2), rest (C,), compliance (C,), tether (C,))."""
    def get_distance_forces(self, out: Optional[npt.NDArray[np.float32]] = None) -> npt.NDArray[np.float32]:
        """Each constraint's tension in the last substep, N, float32 (C,)."""
    def set_groups(self, ids: Indices, groups: Union[int, Indices],
                   inverse_masses: FloatColumn) -> None: ...
    def set_triangles(self, triangles: Indices) -> None: ...
    def get_triangles(self) -> npt.NDArray[np.uint32]: ...
    def set_attachments(self, particles: Indices, kinds: Union[int, npt.ArrayLike],
                        targets: Union[int, npt.ArrayLike], points: npt.ArrayLike,
                        compliance: FloatColumn = 0.0) -> None:
        """Particles held by shapes (ATTACH_SHAPE, static) or bodies (ATTACH_BODY, of a group)."""
    def get_attachments(self) -> Tuple[npt.NDArray[np.uint32], npt.NDArray[np.int32],
                                       npt.NDArray[np.int32], npt.NDArray[np.float32],
                                       npt.NDArray[np.float32]]:
        """(particles (A,), kinds (A,), targets (A,), points (A, 3), compliance (A,))."""
    def set_inflatables(self, triangle_counts: Indices, triangles: Indices,
                        rest_volume: FloatColumn, pressure: FloatColumn = 1.0,
                        compliance: FloatColumn = 0.0) -> None:
        """Inflatables: triangle_counts (K,), triangles (T, 3), rest volume m^3, pressure (a
        multiple of the rest volume), gas compliance m^3/Pa."""
    def get_inflatables(self) -> Tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32],
                                       npt.NDArray[np.float32], npt.NDArray[np.float32],
                                       npt.NDArray[np.float32]]:
        """(triangle_counts (K,), triangles (T, 3), rest_volume, pressure, compliance (K,))."""
    def get_inflatable_volumes(self) -> Tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """(volume m^3, gauge pressure Pa), float32 (K,) each, as the last substep measured."""
    def create_shape(self, kind: ShapeKind, *, radius: float = 0.0, half_length: float = 0.0,
                     half_extents: Optional[Point] = None, points: Optional[npt.ArrayLike] = None,
                     vertices: Optional[npt.ArrayLike] = None,
                     triangles: Optional[Indices] = None,
                     obj: Union[str, os.PathLike[str], None] = None, scale: float = 0.0,
                     two_sided: bool = False, position: Optional[Point] = None,
                     rotation: Optional[Sequence[float]] = None,
                     velocity: Optional[Point] = None, angular_velocity: Optional[Point] = None,
                     friction: float = 0.0, static_friction: float = 0.0, margin: float = 0.0,
                     name: Optional[str] = None, sdf_resolution: int = 0,
                     until: float = 0.0) -> int:
        """A collision shape's id (method pbf only, at most MAX_SHAPES)."""
    def set_shape_motion(self, id: int, position: Optional[Point] = None,
                         rotation: Optional[Sequence[float]] = None,
                         velocity: Optional[Point] = None,
                         angular_velocity: Optional[Point] = None) -> None: ...
    def get_shape_pose(self, id: int) -> Tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """(position (3,) m, rotation quaternion (4,) x, y, z, w)."""
    def destroy_shape(self, id: int) -> None: ...
    def shape_contacts(self, id: int) -> ShapeContacts: ...
    def add(self, positions: npt.ArrayLike, velocities: Optional[npt.ArrayLike] = None) -> range: ...
    def remove(self, indices: Union[Sequence[int], npt.NDArray[np.integer]]) -> None: ...
    def compute_densities(self) -> None: ...
    def get_bodies(self) -> Tuple[Float3, npt.NDArray[np.float32]]: ...
    def set_body(self, body: int, stiffness: float, density: float) -> None: ...
    def set_diffuse(self, capacity: int) -> None: ...
    def get_diffuse(self) -> Tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]: ...
    @overload
    def render(self, eye: Optional[Point] = None, target: Optional[Point] = None,
               up: Point = (0.0, 1.0, 0.0), fov: float = 45.0, width: int = 256,
               height: int = 256, mode: RenderMode = "fluid",
               depth: Literal[False] = False) -> npt.NDArray[np.uint8]:
        """The frame as uint8 RGB (height, width, 3), top row first (docs/PYTHON.md)."""
    @overload
    def render(self, eye: Optional[Point] = None, target: Optional[Point] = None,
               up: Point = (0.0, 1.0, 0.0), fov: float = 45.0, width: int = 256,
               height: int = 256, mode: RenderMode = "fluid", *,
               depth: Literal[True]) -> Tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32]]:
        """(rgb, depth): depth float32 (height, width), metres from the eye's plane, inf where
        nothing was drawn."""
    def save_state(self) -> bytes: ...
    def load_state(self, data: bytes) -> None: ...
    def save(self, path: Union[str, os.PathLike[str]]) -> None: ...
    def load(self, path: Union[str, os.PathLike[str]]) -> None: ...
    def __enter__(self) -> "Solver": ...
    def __exit__(self, *exc: object) -> None: ...
