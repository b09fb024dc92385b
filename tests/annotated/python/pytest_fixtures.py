# A parameter pytest fills is the value of the fixture it names: one declared in the test's class, its module,
# or the conftest.py of its directory or one above (the nearest wins; a fixture requesting its own name gets
# the one it overrides). A parametrized argument, an annotated one and a plain function's parameter are not.
# --- path: kit/runner.py ---
class Runner:
    def invoke(self, cmd):
        return cmd


class Other:
    def invoke(self, cmd):
        return None
# --- path: tests/conftest.py ---
import pytest

from kit.runner import Other, Runner


@pytest.fixture
def runner():
    return Runner()


@pytest.fixture(name="other")
def _other_fixture():
    yield Other()


@pytest.fixture
def wrapped(runner):
    return runner


@pytest.fixture
def mixed(flag):
    if flag:
        return Runner()
    return Other()
# --- path: tests/test_use.py ---
import pytest


def test_one(runner):
    runner.invoke("x")
#   ^ calls: kit.runner.Runner.invoke


def test_named(other):
    other.invoke("y")
#   ^ calls: kit.runner.Other.invoke


def test_through_a_fixture(wrapped):
    wrapped.invoke("z")
#   ^ calls: kit.runner.Runner.invoke


def test_two_values(mixed):
    mixed.invoke("m")
#   ^ unresolved: RECEIVER_NOT_RESOLVED


@pytest.mark.parametrize("runner", [1, 2])
def test_parametrized(runner):
    runner.invoke("p")
#   ^ unresolved: RECEIVER_NOT_RESOLVED


class TestInClass:
    def test_method(self, runner):
        runner.invoke("c")
#       ^ calls: kit.runner.Runner.invoke


def helper(runner):
    runner.invoke("h")
#   ^ unresolved: RECEIVER_NOT_RESOLVED
# --- path: tests/deeper/test_near.py ---
import pytest

from kit.runner import Other


@pytest.fixture
def runner():
    return Other()


def test_near(runner):
    runner.invoke("near")
#   ^ calls: kit.runner.Other.invoke
# --- path: tests/deeper/conftest.py ---
import pytest


@pytest.fixture
def runner(runner):
    return runner


@pytest.fixture
def other(other):
    return other
# --- path: tests/deeper/test_override.py ---
def test_outer_through_override(other):
    other.invoke("o")
#   ^ calls: kit.runner.Other.invoke
