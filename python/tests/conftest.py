"""Fixtures of the pbfcl Python tests: one run per OpenCL device present (PBFCL_DEVICE narrows
it to one), a context per device, and the pbfcl program for comparisons."""
import os

import pytest

import pbfcl


def _devices():
    spec = os.environ.get("PBFCL_DEVICE")
    if spec:
        return [pbfcl.find_device(spec)]
    return list(range(len(pbfcl.devices())))


def pytest_generate_tests(metafunc):
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", _devices(), ids=lambda d: f"device{d}", scope="session")


@pytest.fixture(scope="session")
def context(device):
    ctx = pbfcl.Context(device=device)
    yield ctx
    ctx.destroy()


@pytest.fixture(scope="session")
def program():
    path = os.environ.get("PBFCL_PROGRAM")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("PBFCL_PROGRAM (the pbfcl program) is not set; ctest sets it")
    return path
