"""A PostgreSQL server for the fleet tests: the cluster `.ci/run` started (PASSBRIDGE_TEST_POSTGRES_DIR and
PASSBRIDGE_TEST_POSTGRES_URL), else one started here with Tests/postgres-cluster.sh for the session. Each test
gets a database of its own."""
import glob
import os
import pathlib
import subprocess
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "Tests" / "postgres-cluster.sh"


@pytest.fixture(scope="session")
def postgres_cluster():
    """The cluster's socket directory."""
    directory = os.environ.get("PASSBRIDGE_TEST_POSTGRES_DIR")
    if directory:
        yield directory
        return
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        message = "no PostgreSQL server: install Debian's postgresql package (Tests/install-deps.sh does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    started = subprocess.run(["bash", str(SCRIPT), "start"], capture_output=True, text=True, check=True, timeout=120)
    exports = dict(line.removeprefix("export ").split("=", 1) for line in started.stdout.splitlines())
    directory = exports["PASSBRIDGE_TEST_POSTGRES_DIR"].strip("'")
    yield directory
    subprocess.run(["bash", str(SCRIPT), "stop", directory], check=True, timeout=60)


@pytest.fixture()
def postgres_url(postgres_cluster):
    """The URL of a new, empty database."""
    name = "pb_" + uuid.uuid4().hex[:12]
    createdb = sorted(glob.glob("/usr/lib/postgresql/*/bin/createdb"))[-1]
    subprocess.run([createdb, "-h", postgres_cluster, "-U", "passbridge", name], check=True, timeout=30)
    return f"postgresql:///{name}?host={postgres_cluster}&user=passbridge"
