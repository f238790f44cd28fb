"""Builds the Python package pbfcl (the extension pbfcl._pbfcl over include/pbfcl.h).

It links pbfcl's static library, so the module needs no libpbfcl.so at run time. With a build
tree that has the demo's renderer (build/host/libpbfcl_render.a with libpbfcl_solver_mesh.a,
built when SDL2, GLEW and EGL were found), Solver.render() draws through EGL and the shaders go
into the package; otherwise render() raises an error saying what to install. The library is
looked for, in order, in:
  $PBFCL_PREFIX            an installed pbfcl (cmake --install build --prefix P): P/include, P/lib
  $PBFCL_BUILD_DIR or ../build   the build tree of this checkout (tools/build first)
  pkg-config pbfcl         an installed pbfcl that pkg-config knows

    pip install ./python --no-build-isolation       (offline, with Debian's python3-dev,
                                                      python3-numpy, python3-setuptools)
"""
import os
import re
import shlex
import subprocess

import numpy
from setuptools import Extension, setup
from setuptools.command.build_py import build_py

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)


def private_libs(pc_file):
    """The -l flags of a pbfcl.pc's Libs.private line (cJSON when the library reads JSON)."""
    with open(pc_file, encoding="utf-8") as f:
        for line in f:
            if line.startswith("Libs.private:"):
                return [w[2:] for w in shlex.split(line.split(":", 1)[1]) if w.startswith("-l")]
    return []


def from_prefix(prefix):
    for libdir in ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu"):
        archive = os.path.join(prefix, libdir, "libpbfcl.a")
        if os.path.exists(archive):
            pc = os.path.join(prefix, libdir, "pkgconfig", "pbfcl.pc")
            return os.path.join(prefix, "include"), archive, private_libs(pc) if os.path.exists(pc) else []
    raise SystemExit(f"pbfcl setup: no libpbfcl.a under {prefix}/lib (PBFCL_PREFIX)")


def from_build_tree(build):
    archive = os.path.join(build, "host", "libpbfcl.a")
    if not os.path.exists(archive):
        return None
    return os.path.join(root, "include"), archive, private_libs(os.path.join(build, "pbfcl.pc"))


def from_pkg_config():
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "pbfcl"], check=True,
                             capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return from_prefix(os.path.dirname(out)) if out else None


def find_library():
    if os.environ.get("PBFCL_PREFIX"):
        return from_prefix(os.environ["PBFCL_PREFIX"])
    found = from_build_tree(os.environ.get("PBFCL_BUILD_DIR", os.path.join(root, "build")))
    found = found or from_pkg_config()
    if not found:
        raise SystemExit("pbfcl setup: pbfcl's library was not found: run tools/build in the "
                         "checkout first, or set PBFCL_PREFIX to an installed pbfcl "
                         "(cmake --install build --prefix P)")
    return found


def header_version(include):
    with open(os.path.join(include, "pbfcl.h"), encoding="utf-8") as f:
        text = f.read()
    parts = [re.search(rf"#define PBFCL_VERSION_{k} (\d+)", text).group(1)
             for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def find_renderer(archive):
    """The renderer's archives beside the library's in a build tree (the renderer and the
    cloth's and ropes' surfaces it draws, libpbfcl_solver_mesh.a), or None."""
    render = os.path.join(os.path.dirname(archive), "libpbfcl_render.a")
    meshes = os.path.join(os.path.dirname(archive), "libpbfcl_solver_mesh.a")
    demo = os.path.join(root, "host", "demo")
    if all(os.path.exists(p) for p in (render, meshes, os.path.join(demo, "demo_offscreen.h"))):
        return [render, meshes]
    return None


class build_py_with_shaders(build_py):
    """Also copies the shaders render() draws with into the package (pbfcl/shaders)."""

    def run(self):
        super().run()
        if renderer:
            self.copy_tree(os.path.join(root, "shaders"),
                           os.path.join(self.build_lib, "pbfcl", "shaders"))


include, archive, libs = find_library()
renderer = find_renderer(archive)
render_args = dict(
    extra_objects=renderer + [archive], libraries=["EGL", "GLEW", "GL"],
    include_dirs=[os.path.join(root, "host", "demo")], define_macros=[("PBFCL_PY_RENDER", "1")],
) if renderer else dict(extra_objects=[archive], libraries=[], include_dirs=[], define_macros=[])
sources = sorted(os.path.join("src", f) for f in os.listdir(os.path.join(here, "src"))
                 if f.endswith(".c"))
setup(
    name="pbfcl",
    version=header_version(include),
    description="Position Based Fluids and unified particles on OpenCL (Python bindings)",
    license="MIT",
    packages=["pbfcl"],
    package_data={"pbfcl": ["*.pyi", "py.typed"]},
    ext_modules=[Extension(
        "pbfcl._pbfcl", sources=sources,
        include_dirs=[include, numpy.get_include()] + render_args["include_dirs"],
        define_macros=[("CL_TARGET_OPENCL_VERSION", "120")] + render_args["define_macros"],
        extra_objects=render_args["extra_objects"],
        libraries=render_args["libraries"] + ["OpenCL"] + [l for l in libs if l != "OpenCL"],
        extra_compile_args=["-std=c11", "-fvisibility=hidden"],
    )],
    cmdclass={"build_py": build_py_with_shaders},
    python_requires=">=3.9",
    install_requires=["numpy"],
)
