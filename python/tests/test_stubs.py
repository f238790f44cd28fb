"""The type stubs (pbfcl/__init__.pyi) and the docstrings cover the module: every public name of
the package, of Context and of Solver is declared in the stubs, and every method and property
the extension defines has a docstring (so help(pbfcl.Solver) documents it). A name added to the
C module without its stub or docstring fails here, by name."""
import ast
import inspect
import os

import pbfcl

STUBS = os.path.join(os.path.dirname(os.path.abspath(pbfcl.__file__)), "__init__.pyi")


def stub_names():
    tree = ast.parse(open(STUBS, encoding="utf-8").read())
    top, classes = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            members = set()
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
            classes[node.name] = members
            top.add(node.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
        elif isinstance(node, ast.Assign):
            top.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return top, classes


def public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def test_stubs_declare_every_public_name():
    top, classes = stub_names()
    missing = sorted(set(pbfcl.__all__) - top)
    assert not missing, f"pbfcl/__init__.pyi lacks {missing}"
    for cls in (pbfcl.Context, pbfcl.Solver):
        missing = sorted(public(cls) - classes[cls.__name__])
        assert not missing, f"pbfcl/__init__.pyi's {cls.__name__} lacks {missing}"


def test_every_method_and_property_has_a_docstring():
    for cls in (pbfcl.Context, pbfcl.Solver, pbfcl.Params):
        bare = [n for n in public(cls)
                if not (inspect.getdoc(getattr(cls, n)) or "").strip()]
        assert not bare, f"{cls.__name__} has no docstring for {sorted(bare)}"
    bare = [n for n in pbfcl.__all__ if callable(getattr(pbfcl, n))
            and not (inspect.getdoc(getattr(pbfcl, n)) or "").strip()]
    assert not bare, f"pbfcl has no docstring for {sorted(bare)}"
