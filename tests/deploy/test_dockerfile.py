"""The Dockerfile, checked without a container engine (CI has none): the build stage's own RUN lines, read from the
Dockerfile, run in a clean directory with the files its COPY lines name and the uv of the Makefile's version (the
one the image copies), and the virtualenv they make starts `companion`; the runtime stage runs as a user without
privileges under tini and exposes the webhook and metrics ports. Building and running the real image is described
in the README ("Self-hosting")."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Stage:
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [argument for kind, argument in self.instructions if kind == keyword]


def arguments() -> dict[str, str]:
    return dict(re.findall(r"^ARG (\w+)=(\S+)$", (ROOT / "Dockerfile").read_text(), re.MULTILINE))


def stages() -> list[Stage]:
    """The Dockerfile's stages, each a list of (INSTRUCTION, argument) with continuation lines joined."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    found: list[Stage] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, argument = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            words = argument.split()
            found.append(Stage(words[2] if len(words) == 3 and words[1].upper() == "AS" else None))
        if found:
            found[-1].instructions.append((keyword, " ".join(argument.split())))
    return found


def environment(stage: Stage) -> dict[str, str]:
    values: dict[str, str] = {}
    for argument in stage.all("ENV"):
        for pair in shlex.split(argument):
            name, _, value = pair.partition("=")
            values[name] = value
    return values


def test_the_image_has_a_build_stage_and_runs_unprivileged_under_tini_with_the_ports_exposed() -> None:
    uv, build, runtime = stages()
    assert (uv.name, build.name, runtime.name) == ("uv", "build", None)
    venv = environment(build)["VENV"]
    (workdir,) = build.all("WORKDIR")
    assert sorted(runtime.all("COPY")) == sorted([f"--from=build {venv} {venv}", f"--from=build {workdir} {workdir}"])
    assert environment(runtime)["PATH"].startswith(f"{venv}/bin:")
    (user,) = runtime.all("USER")
    assert user not in ("root", "0")
    assert any(f"useradd --create-home --uid 10001 {user}" in run for run in runtime.all("RUN"))
    assert any("install --yes --no-install-recommends tini" in run for run in runtime.all("RUN"))
    assert runtime.all("ENTRYPOINT") == ['["tini", "--", "companion"]']
    assert set(" ".join(runtime.all("EXPOSE")).split()) == {"8443", "9464"}
    assert environment(runtime)["TELEGRAM_WEBHOOK_LISTEN"].endswith(":8443")
    assert environment(runtime)["COMPANION_DATA_DIR"] == "/data" and runtime.all("VOLUME") == ['["/data"]']
    assert runtime.all("HEALTHCHECK")


def test_the_image_takes_uv_at_the_makefiles_version() -> None:
    version = re.search(r"^UV_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert version is not None
    assert arguments()["UV_IMAGE"] == f"ghcr.io/astral-sh/uv:{version.group(1)}"
    _, build, _ = stages()
    assert build.all("COPY")[0] == "--from=uv /uv /usr/local/bin/uv"


def test_every_package_of_the_project_is_copied_into_the_image() -> None:
    _, build, _ = stages()
    copied = {source for argument in build.all("COPY") for source in argument.split()[:-1]}
    include = re.search(r"include = \[(.*?)\]", (ROOT / "pyproject.toml").read_text())
    assert include is not None
    packages = {name.strip(' "*') for name in include.group(1).split(",")}
    assert packages | {"migrations", "locales", "pyproject.toml", "requirements.lock", "README.md"} <= copied


@pytest.mark.slow
def test_the_build_stage_commands_make_a_virtualenv_that_runs_companion(tmp_path: Path) -> None:
    _, build, _ = stages()
    (workdir,) = build.all("WORKDIR")
    app, venv, tools = tmp_path / "app", tmp_path / "venv", tmp_path / "bin"
    app.mkdir()
    tools.mkdir()
    # The image's uv is the Makefile's version (test above), as is the one `make install` put beside this Python.
    (tools / "uv").symlink_to(Path(sys.executable).with_name("uv"))
    env = {**os.environ, **environment(build), "PATH": f"{tools}:{os.environ['PATH']}", "VENV": str(venv),
           # Precompiling every installed module takes longer than the rest together and is the image's own
           # business: the start-up time of a read-only install. Here Python writes its bytecode as it goes.
           "UV_COMPILE_BYTECODE": "0"}
    env.pop("VIRTUAL_ENV", None)
    ran = 0
    for keyword, argument in build.instructions:
        if keyword == "COPY" and argument.startswith("--from=uv "):
            continue  # the uv above
        if keyword == "COPY":
            *sources, target = argument.split()
            for source in sources:
                destination = app / target / (Path(source).name if target.endswith("/") else "")
                if (ROOT / source).is_dir():
                    shutil.copytree(ROOT / source, destination,
                                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.mo"))
                else:
                    shutil.copy(ROOT / source, destination)
        elif keyword == "RUN":
            done = subprocess.run(["sh", "-ec", argument], cwd=app, env=env, capture_output=True, text=True,
                                  timeout=300)
            assert done.returncode == 0, (argument, done.stdout[-2000:], done.stderr[-2000:])
            ran += 1
    assert ran == 3
    help_text = subprocess.run([str(venv / "bin" / "companion"), "--help"], cwd=tmp_path, capture_output=True,
                               text=True, timeout=120, env={"PATH": f"{venv}/bin:/usr/bin:/bin", "HOME": str(tmp_path)})
    assert help_text.returncode == 0, help_text.stderr
    for command in ("run", "chat", "doctor", "migrate", "backup", "restore", "import"):
        assert re.search(rf"│ {command}\b", help_text.stdout), command
    # The code, its migrations and its compiled catalogues are found in the copied tree, as in the image's /app.
    found = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import brain.store.migrate as m, brain.i18n as i; print(m.MIGRATIONS_DIR); print(i.LOCALES_DIR)"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert found.stdout.split() == [str(app / "migrations"), str(app / "locales")], found.stderr
    assert (app / "locales" / "de" / "LC_MESSAGES" / "messages.mo").is_file()
    assert workdir == "/app"
