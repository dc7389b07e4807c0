"""compose.yaml and .env.example, checked without a container engine: the three services with their images,
named volumes and health checks, the companion pointed at the compose file's own PostgreSQL and Ollama, every
variable it sets a real setting; and .env.example lists every setting with its default."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from bot.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_ONLY = {"POSTGRES_PASSWORD"}  # read by compose.yaml itself, not by the companion


def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "compose.yaml").read_text()))


def setting_names() -> dict[str, str]:
    """Environment name -> field name of every setting."""
    return {str(field.validation_alias.choices[0]): name  # type: ignore[union-attr]
            for name, field in Settings.model_fields.items()}


def test_three_services_with_named_volumes_and_health_checks() -> None:
    document = compose()
    services = document["services"]
    assert set(services) == {"companion", "postgres", "ollama"}
    assert services["postgres"]["image"].startswith("pgvector/pgvector:pg18")
    assert services["ollama"]["image"].startswith("ollama/ollama")
    assert services["companion"]["build"] == "."
    named = set(document["volumes"])
    for name, service in services.items():
        assert service["healthcheck"]["test"], name
        assert service["restart"] == "unless-stopped", name
        mounts = [volume.split(":") for volume in service["volumes"]]
        assert mounts and all(source in named for source, *_ in mounts), name
    assert {"/data", "/var/lib/postgresql", "/root/.ollama"} == {
        target for service in services.values() for _, target, *_ in (v.split(":") for v in service["volumes"])}
    assert services["companion"]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_the_companion_uses_the_compose_files_postgres_and_ollama_and_sets_only_real_settings() -> None:
    services = compose()["services"]
    environment = services["companion"]["environment"]
    assert set(environment) <= set(setting_names())
    postgres = services["postgres"]["environment"]
    url = re.fullmatch(r"postgresql://(\w+):\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432/(\w+)",
                       environment["DATABASE_URL"])
    assert url is not None and url.groups() == (postgres["POSTGRES_USER"], postgres["POSTGRES_DB"])
    assert environment["OLLAMA_HOST"] == "http://ollama:11434"
    assert environment["COMPANION_DATA_DIR"] == "/data"
    # The webhook port of the image, published to this machine only (a reverse proxy serves it to Telegram).
    assert services["companion"]["ports"] == ["127.0.0.1:8443:8443"]
    assert {"path": ".env", "required": False} in services["companion"]["env_file"]


def example() -> dict[str, str]:
    lines = (ROOT / ".env.example").read_text().splitlines()
    return dict(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=(.*)$", "\n".join(lines), re.MULTILINE))


def written(value: object) -> str:
    """A default as the file writes it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def test_env_example_lists_every_setting_with_its_default() -> None:
    listed = example()
    names = setting_names()
    assert set(listed) - COMPOSE_ONLY == set(names)
    for env_name, field_name in names.items():
        field = Settings.model_fields[field_name]
        if field.default_factory is not None:
            continue  # the data directory: per platform (platformdirs)
        assert listed[env_name] == written(field.default), env_name


def test_every_setting_is_in_the_readmes_configuration_table() -> None:
    first_cells = re.findall(r"^\| ([^|]+) \|", (ROOT / "README.md").read_text(), re.MULTILINE)
    documented = {name for cell in first_cells for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", cell)}
    assert set(setting_names()) - documented == set()
