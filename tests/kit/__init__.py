"""The tests' one helper kit: how to run git and the CLI, repositories, entries, faults,
servers and the fixtures the test folders share. Each module is one concept; tests import
from the module that holds a name (tests/ is on sys.path through tests/conftest.py)."""
