"""ctest's entry to the pbfcl Python tests: runs pytest on this folder with the module of the
build (PYTHONPATH), exit 77 (skipped) with a message when pytest or an OpenCL device is
missing."""
import sys

SKIP = 77

try:
    import pytest
except ImportError:
    print("SKIP: pytest is not installed (Debian: apt-get install python3-pytest)")
    sys.exit(SKIP)

import pbfcl

if not pbfcl.devices():
    print("SKIP: no OpenCL device found (pbfcl.devices() is empty)")
    sys.exit(SKIP)

here = sys.path[0]
sys.exit(pytest.main([here, "-q", "-p", "no:cacheprovider"] + sys.argv[1:]))
