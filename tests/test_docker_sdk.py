"""A tool server over the Docker SDK: the daemon's objects, local by default, judged by what
each documented call does; methods of objects the client hands out (``container.start()``,
``network.remove()``) are the service's, not a list's."""

from __future__ import annotations

from tests.conftest import ScanFiles, tool_verdicts

SERVER = """\
import docker
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("docker")
client: docker.DockerClient


def connect() -> None:
    global client
    client = docker.from_env()


@mcp.tool()
def list_networks() -> list[str]:
    \"\"\"List the networks.\"\"\"
    names = [network.name for network in client.networks.list()]
    names.remove("bridge")
    return names


@mcp.tool()
def start_container(container_id: str) -> str:
    \"\"\"Start a container.\"\"\"
    container = client.containers.get(container_id)
    container.start()
    return container.status


@mcp.tool()
def remove_network(network_id: str) -> str:
    \"\"\"Remove a network.\"\"\"
    network = client.networks.get(network_id)
    network.remove()
    return "removed"


@mcp.tool()
def pull_image(repository: str, tag: str = "latest") -> str:
    \"\"\"Pull an image.\"\"\"
    return client.images.pull(repository, tag=tag).id


@mcp.tool()
def build_image(path: str, tag: str) -> str:
    \"\"\"Build an image from a folder holding a Dockerfile.\"\"\"
    image, _ = client.images.build(path=path, tag=tag)
    return image.id


@mcp.tool()
def create_volume(name: str) -> str:
    \"\"\"Create a named volume.\"\"\"
    return client.volumes.create(name=name).name
"""


def test_docker_calls_are_judged_by_what_the_sdk_documents(scan_files: ScanFiles) -> None:
    verdicts = tool_verdicts(scan_files, {"server.py": SERVER})
    assert verdicts["list_networks"] == ("read", set())
    assert verdicts["start_container"][0] == "write"
    assert verdicts["remove_network"][0] == "destructive"
    assert verdicts["pull_image"][0] == "write"
    assert verdicts["build_image"][0] == "exec"
    # the daemon is local, and a volume made again by its name is the same volume
    assert verdicts["create_volume"][0] == "write"
    assert "AG201" not in verdicts["create_volume"][1]
    assert all("AG201" not in codes for _, codes in verdicts.values())
