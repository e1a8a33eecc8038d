"""The deployment files under cluster/ are valid for the tools that consume them, checked offline.

* cluster/aws.yaml: Ray's own `prepare_config` + `validate_config` (the schema check `ray up`
  runs before it talks to AWS), with every socket connect forbidden.
* cluster/rayjob.yaml: cluster/crds/rayjob-v1.schema.json (our strict subset of the ray.io/v1
  RayJob API; the upstream CRD cannot be obtained offline) plus the product's rules: keys only from
  a Secret, code in the image, IRSA service account, an entrypoint the real CLI accepts.
* cluster/runtime_env.yaml + .rayignore: the working_dir zip built by Ray's own packaging code,
  and Ray's own merge of the job's runtime_env with the driver's.
* cluster/Dockerfile: structure only (no Docker engine here).
* A real multi-node Ray cluster (ray.cluster_utils.Cluster) in a subprocess, because the rest
  of the suite shares one session-wide local Ray in this process.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import textwrap
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import ray
import yaml

from evalcore.config.load import load_config
from tests.ray_start import PROGRESS_DEADLINE_S, STARTUP_DEADLINE_S

REPO = Path(__file__).resolve().parents[2]
CLUSTER = REPO / "cluster"
PY_TAG = "py311"  # rayproject/ray tag for Python 3.11 (pyproject requires-python >= 3.11)


def _yaml(name: str) -> Any:
    return yaml.safe_load((CLUSTER / name).read_text())


def _key_names() -> set[str]:
    """Environment variables holding judge keys, as the product's real configuration names them."""
    return {v.api_key_env for v in load_config(vendors="real").vendors() if v.api_key_env}


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a connection fails the test: proves a check is offline."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


# --------------------------------------------------------------------------------------------
# cluster/aws.yaml (Ray cluster launcher)
# --------------------------------------------------------------------------------------------


def _ray_up_schema_check(config: dict[str, Any]) -> dict[str, Any]:
    """What `ray up` does to the YAML before contacting the cloud (commands._bootstrap_config)."""
    from ray.autoscaler._private.util import prepare_config, validate_config

    prepared = prepare_config(copy.deepcopy(config))
    validate_config(prepared)
    return prepared


def test_aws_yaml_passes_rays_own_schema_check_without_network(no_network: None) -> None:
    raw = _yaml("aws.yaml")
    prepared = _ray_up_schema_check(raw)
    assert prepared["provider"]["type"] == "aws"
    worker = prepared["available_node_types"]["cpu_worker"]
    assert 0 <= worker["min_workers"] <= worker["max_workers"] <= prepared["max_workers"]
    assert prepared["available_node_types"][prepared["head_node_type"]]["resources"] == {"CPU": 0}
    assert prepared["setup_commands"] == raw["setup_commands"]  # ours, not Ray's AWS defaults


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(lambda c: c.update(max_worker=3), id="misspelt-top-level-field"),
        pytest.param(lambda c: c["available_node_types"]["cpu_worker"].update(min_worker=1), id="misspelt-node-field"),
        pytest.param(lambda c: c["available_node_types"]["cpu_worker"].update(min_workers=99), id="min-workers-above-cluster-max"),
        pytest.param(lambda c: c.update(head_node_type="gpu_head"), id="unknown-head-type"),
    ],
)
def test_aws_yaml_schema_check_rejects_a_broken_copy(mutate: Any) -> None:
    broken = _yaml("aws.yaml")
    mutate(broken)
    with pytest.raises((jsonschema.ValidationError, ValueError)):
        _ray_up_schema_check(broken)


def test_aws_yaml_image_runs_the_ray_and_python_this_repo_pins() -> None:
    assert _yaml("aws.yaml")["docker"]["image"] == f"rayproject/ray:{ray.__version__}-{PY_TAG}-cpu"
    requires = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == ">=3.11"


def test_aws_yaml_uses_one_region_everywhere() -> None:
    text = (CLUSTER / "aws.yaml").read_text()
    region = _yaml("aws.yaml")["provider"]["region"]
    mentioned = set(re.findall(r"\b[a-z]{2}-(?:[a-z]+-)+\d\b", text))
    assert mentioned == {region}
    assert f"AWS_REGION={region}" in " ".join(_yaml("aws.yaml")["docker"]["run_options"])


def test_aws_yaml_starts_every_node_with_token_auth_and_the_keys_env_file() -> None:
    cfg = _yaml("aws.yaml")
    starts = [c for c in cfg["head_start_ray_commands"] + cfg["worker_start_ray_commands"] if "ray start" in c]
    assert len(starts) == 2
    assert all("RAY_AUTH_MODE=token ray start" in c for c in starts)
    assert cfg["file_mounts"]["~/.ray"] == "~/.ray"  # the token made by `ray get-auth-token --generate`
    env_file = next(o.split()[1] for o in cfg["docker"]["run_options"] if o.startswith("--env-file"))
    assert any(env_file in c and "secretsmanager" in c for c in cfg["initialization_commands"])


def test_aws_yaml_syncs_the_repo_without_venv_git_or_outputs() -> None:
    cfg = _yaml("aws.yaml")
    assert cfg["file_mounts"]["~/tribunal"] == "."
    assert {".venv", "**/.git", "runs", "benchmarks/results"} <= set(cfg["rsync_exclude"])
    assert set(cfg["rsync_filter"]) == {".gitignore", ".rayignore"}
    assert "pip install -q -e ~/tribunal" in cfg["setup_commands"]


SECRET_PATTERNS = {
    "AWS account id": re.compile(r"(?<![\d.])\d{12}(?![\d.])"),
    "AWS access key": re.compile(r"\bA(?:KIA|SIA)[0-9A-Z]{16}\b"),
    "OpenAI/Anthropic key": re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),
    "xAI key": re.compile(r"\bxai-[A-Za-z0-9]{16,}"),
}


@pytest.mark.parametrize(
    "name", ["aws.yaml", "rayjob.yaml", "runtime_env.yaml", "Dockerfile", "README.md", "crds/rayjob-v1.schema.json"]
)
def test_cluster_file_holds_no_account_id_or_key(name: str) -> None:
    text = (CLUSTER / name).read_text()
    found = {what for what, pattern in SECRET_PATTERNS.items() if pattern.search(text)}
    assert not found, f"cluster/{name} contains what looks like: {sorted(found)}"


def test_account_specific_values_are_replace_me_placeholders() -> None:
    aws, rayjob = (CLUSTER / "aws.yaml").read_text(), (CLUSTER / "rayjob.yaml").read_text()
    assert re.findall(r"arn:aws:iam::([^:]+):", aws + rayjob) == ["REPLACE_ME_ACCOUNT_ID"] * 3
    entrypoint = _rayjob_docs()["RayJob"]["spec"]["entrypoint"]
    uris = re.findall(r"s3://\S+", entrypoint)
    assert len(uris) == 3 and all(uri.startswith("s3://REPLACE_ME") for uri in uris)
    images = {c["image"] for c in _containers(_rayjob_docs()["RayJob"])}
    assert all(image.startswith("REPLACE_ME") for image in images)


# --------------------------------------------------------------------------------------------
# cluster/rayjob.yaml (KubeRay)
# --------------------------------------------------------------------------------------------


def _rayjob_docs() -> dict[str, dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all((CLUSTER / "rayjob.yaml").read_text()) if d]
    return {d["kind"]: d for d in docs}


def _validator(kind: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((CLUSTER / "crds" / "rayjob-v1.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{kind}", "$defs": schema["$defs"]})


def _containers(rayjob: dict[str, Any]) -> list[dict[str, Any]]:
    spec = rayjob["spec"]["rayClusterSpec"]
    groups = [spec["headGroupSpec"], *spec["workerGroupSpecs"]]
    return [c for g in groups for c in g["template"]["spec"]["containers"]]


def test_rayjob_file_is_a_service_account_and_a_ray_io_v1_rayjob() -> None:
    assert list(_rayjob_docs()) == ["ServiceAccount", "RayJob"]


@pytest.mark.parametrize("kind", ["ServiceAccount", "RayJob"])
def test_rayjob_documents_match_the_schema(kind: str) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in _validator(kind).iter_errors(_rayjob_docs()[kind])]
    assert errors == []


@pytest.mark.parametrize(
    "path, value",
    [
        pytest.param(("spec", "shutdownAfterJobFinish"), True, id="misspelt-spec-field"),
        pytest.param(("spec", "rayClusterSpec", "workerGroupSpecs", 0, "maxReplica"), 3, id="misspelt-group-field"),
        pytest.param(("spec", "rayClusterSpec", "headGroupSpec", "rayStartParams", "num-cpus"), 0, id="non-string-start-param"),
        pytest.param(("spec", "submissionMode"), "K8sMode", id="unknown-submission-mode"),
        pytest.param(("spec", "rayClusterSpec", "workerGroupSpecs", 0, "template", "spec", "containers", 0,
                      "env", 0, "valueFrom", "secretKeyRef", "keys"), "X", id="misspelt-secret-ref"),
        pytest.param(("spec", "rayClusterSpec", "workerGroupSpecs", 0, "template", "spec", "containers", 0,
                      "resources", "limits", "memory"), "16 GB", id="bad-quantity"),
    ],
)
def test_rayjob_schema_rejects_a_broken_copy(path: tuple[Any, ...], value: object) -> None:
    broken = copy.deepcopy(_rayjob_docs()["RayJob"])
    node: Any = broken
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    assert list(_validator("RayJob").iter_errors(broken)), f"schema accepted {path} = {value!r}"


def test_rayjob_pods_take_every_judge_key_from_the_kubernetes_secret() -> None:
    keys = _key_names()
    assert keys == {"OPENAI_API_KEY", "XAI_API_KEY", "ANTHROPIC_API_KEY"}
    for container in _containers(_rayjob_docs()["RayJob"]):
        env = {e["name"]: e for e in container["env"]}
        for key in keys:
            assert "value" not in env[key], f"{container['name']}: {key} has a literal value"
            assert env[key]["valueFrom"]["secretKeyRef"] == {"name": "tribunal-judge-keys", "key": key}


def test_rayjob_runs_code_baked_into_the_image_with_no_local_working_dir() -> None:
    spec = _rayjob_docs()["RayJob"]["spec"]
    runtime_env = yaml.safe_load(spec.get("runtimeEnvYAML", "")) or {}
    working_dir = runtime_env.get("working_dir")
    assert working_dir is None or re.match(r"^(s3|gs|https)://.+\.zip$", working_dir)
    images = {c["image"] for c in _containers(_rayjob_docs()["RayJob"])}
    assert len(images) == 1 and next(iter(images)).endswith("/tribunal:0.1.0")


def test_rayjob_pods_get_s3_through_the_irsa_service_account() -> None:
    docs = _rayjob_docs()
    account = docs["ServiceAccount"]["metadata"]
    assert account["annotations"]["eks.amazonaws.com/role-arn"].startswith("arn:aws:iam::")
    spec = docs["RayJob"]["spec"]["rayClusterSpec"]
    for group in [spec["headGroupSpec"], *spec["workerGroupSpecs"]]:
        assert group["template"]["spec"]["serviceAccountName"] == account["name"]
    for container in _containers(docs["RayJob"]):
        assert not {e["name"] for e in container["env"]} & {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}


def test_rayjob_cluster_matches_the_pinned_ray_with_token_auth_and_a_cpu0_head() -> None:
    spec = _rayjob_docs()["RayJob"]["spec"]
    cluster = spec["rayClusterSpec"]
    assert cluster["rayVersion"] == ray.__version__
    assert cluster["authOptions"] == {"mode": "token"}
    assert cluster["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"
    workers = cluster["workerGroupSpecs"][0]
    assert cluster["enableInTreeAutoscaling"] and workers["minReplicas"] <= workers["maxReplicas"]
    assert spec["shutdownAfterJobFinishes"] is True


def test_rayjob_entrypoint_is_accepted_by_the_tribunal_cli() -> None:
    import typer

    from jobs.cli.app import app

    argv = shlex.split(_rayjob_docs()["RayJob"]["spec"]["entrypoint"])
    assert argv[:2] == ["tribunal", "sweep"]
    sweep = typer.main.get_command(app).commands["sweep"]  # type: ignore[attr-defined]
    ctx = sweep.make_context("sweep", argv[2:])  # parses and type-checks (unknown flags raise), does not run
    assert ctx.params["vendors"] == "real" and ctx.params["address"] == "auto"
    assert ctx.params["output"].startswith("s3://") and ctx.params["benchmark"].startswith("s3://")
    assert ctx.params["progress"] is False


# --------------------------------------------------------------------------------------------
# cluster/runtime_env.yaml + .rayignore (ray job submit --working-dir .)
# --------------------------------------------------------------------------------------------


def _build_working_dir_zip(runtime_env: dict[str, Any], out: Path) -> list[str]:
    """Zip working_dir exactly as `ray job submit` does; return the archive's names.

    Ray's own code paths: the CLI's `parse_runtime_env_args` result goes through
    `upload_working_dir_if_needed` (merges Ray's default excludes, the runtime_env's excludes,
    .gitignore and .rayignore); our upload function writes the zip with `create_package`
    instead of sending it to a cluster.
    """
    from ray._private.runtime_env.packaging import create_package
    from ray._private.runtime_env.working_dir import upload_working_dir_if_needed

    def write_zip(working_dir: str, excludes: list[str] | None, is_file: bool = False) -> None:
        assert not is_file
        create_package(working_dir, out, include_gitignore=True, excludes=excludes)

    upload_working_dir_if_needed(copy.deepcopy(runtime_env), include_gitignore=True, upload_fn=write_zip)
    with zipfile.ZipFile(out) as z:
        return z.namelist()


def _submit_runtime_env(working_dir: Path) -> dict[str, Any]:
    """The runtime_env `ray job submit --runtime-env cluster/runtime_env.yaml --working-dir DIR` builds."""
    from ray.dashboard.modules.dashboard_sdk import parse_runtime_env_args

    env: dict[str, Any] = parse_runtime_env_args(
        runtime_env=str(CLUSTER / "runtime_env.yaml"), working_dir=str(working_dir)
    )
    return env


def test_runtime_env_is_accepted_by_rays_runtime_env_validation() -> None:
    from ray.runtime_env import RuntimeEnv

    env = RuntimeEnv(**_yaml("runtime_env.yaml"))
    assert set(env.keys()) == {"excludes", "env_vars"}


def test_working_dir_upload_of_this_checkout_is_small_and_carries_the_code(tmp_path: Path) -> None:
    out = tmp_path / "pkg.zip"
    names = _build_working_dir_zip(_submit_runtime_env(REPO), out)
    size_mb = out.stat().st_size / 2**20
    assert size_mb < 20, f"working_dir zip is {size_mb:.1f} MiB"
    for needed in ("pyproject.toml", "evalcore/__init__.py", "evalcore/config/defaults.yaml", "jobs/cli/app.py",
                   "jobs/sweep/driver.py", "cluster/runtime_env.yaml"):
        assert needed in names
    assert any(n.startswith("examples/sample/submissions/") for n in names)
    banned = (".venv/", ".git/", "runs/", "benchmarks/results/", "tribunal.egg-info/", ".hypothesis/")
    assert [n for n in names if n.startswith(banned) or "__pycache__" in n] == []


JUNK = [
    ".venv/lib/python3.11/site-packages/big.so",
    ".git/objects/ab/cdef",
    "runs/demo/verdicts/part-0.parquet",
    "examples/runs/old/run.json",
    "benchmarks/results/reduce_scale.json",
    "session_2026-11-30_04-35-40_274164_11960/logs/raylet.out",
    "evalcore/__pycache__/x.cpython-311.pyc",
    "tribunal.egg-info/PKG-INFO",
    ".hypothesis/examples/x",
    "judge-keys.env",
]
KEEP = ["evalcore/__init__.py", "jobs/cli/app.py", "examples/sample/submissions/a/answer.md", "benchmarks/scale.py"]


@pytest.fixture
def planted_checkout(tmp_path: Path) -> Path:
    """A checkout with this repo's ignore files, some code, and every kind of junk a working dir collects."""
    root = tmp_path / "checkout"
    for rel in JUNK + KEEP:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    for ignore in (".gitignore", ".rayignore"):
        (root / ignore).write_text((REPO / ignore).read_text())
    return root


def test_working_dir_excludes_drop_every_planted_kind_of_junk(planted_checkout: Path, tmp_path: Path) -> None:
    names = _build_working_dir_zip(_submit_runtime_env(planted_checkout), tmp_path / "pkg.zip")
    assert sorted(names) == sorted(KEEP + [".gitignore", ".rayignore"])


def test_rayignore_alone_drops_the_junk(planted_checkout: Path, tmp_path: Path) -> None:
    """Even a bare `--working-dir .` (no runtime_env file, no Ray defaults, .gitignore off) stays small."""
    from ray._private.runtime_env.packaging import create_package

    (planted_checkout / ".gitignore").unlink()
    create_package(str(planted_checkout), tmp_path / "bare.zip", include_gitignore=False, excludes=[])
    with zipfile.ZipFile(tmp_path / "bare.zip") as z:
        assert sorted(z.namelist()) == sorted(KEEP + [".rayignore"])


def test_job_runtime_env_merges_with_the_env_the_driver_forwards() -> None:
    """The driver passes keys and AWS_*/TRIBUNAL_* in its ray.init runtime_env; Ray rejects overlaps."""
    from ray.runtime_env import RuntimeEnv
    from ray.runtime_env.runtime_env import _merge_runtime_env

    job_env = RuntimeEnv(**_yaml("runtime_env.yaml"))
    own = set(job_env.get("env_vars", {}))
    assert not own & _key_names()
    assert not {n for n in own if n.startswith(("AWS_", "TRIBUNAL_"))}
    forwarded = {n: "x" for n in _key_names() | {"AWS_REGION", "AWS_ENDPOINT_URL", "TRIBUNAL_CACHE_DIR"}}
    merged = _merge_runtime_env(job_env, RuntimeEnv(env_vars=forwarded))
    assert merged is not None and set(merged["env_vars"]) == own | set(forwarded)
    # The rule is real: the same merge with one overlapping variable is refused.
    assert _merge_runtime_env(job_env, RuntimeEnv(env_vars={next(iter(own)): "y"})) is None


# --------------------------------------------------------------------------------------------
# cluster/Dockerfile (no Docker engine here: structure only)
# --------------------------------------------------------------------------------------------


def _dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, comments dropped, backslash continuations joined."""
    logical, pending = [], ""
    for line in (CLUSTER / "Dockerfile").read_text().splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        logical.append(pending.strip())
        pending = ""
    assert not pending, "Dockerfile ends inside a continued line"
    return [(ln.split(None, 1)[0].upper(), ln.split(None, 1)[1]) for ln in logical]


def test_dockerfile_base_image_is_pinned_to_the_repos_ray_and_python() -> None:
    froms = [args for op, args in _dockerfile_instructions() if op == "FROM"]
    assert froms == [f"rayproject/ray:{ray.__version__}-{PY_TAG}-cpu"]


def test_dockerfile_installs_this_repo_from_files_that_exist() -> None:
    steps = _dockerfile_instructions()
    copied = [src for op, args in steps if op == "COPY" for src in args.split()[:-1] if not src.startswith("--")]
    assert {"pyproject.toml", "evalcore", "jobs"} <= set(copied)
    assert all((REPO / src).exists() for src in copied), "a COPY source is missing from the repo"
    runs = " ".join(args for op, args in steps if op == "RUN")
    assert "pip install --no-cache-dir --no-deps ." in runs and "tribunal --help" in runs


def test_dockerfile_bakes_in_no_secret() -> None:
    settings = [args for op, args in _dockerfile_instructions() if op in {"ENV", "ARG"}]
    names = [re.split(r"[=\s]", s, maxsplit=1)[0] for s in settings]
    assert not [n for n in names if re.search(r"KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL", n, re.I)]
    ignored = (CLUSTER / "Dockerfile.dockerignore").read_text().split()
    assert {".git", ".venv", "runs", "*.env"} <= set(ignored)


# --------------------------------------------------------------------------------------------
# cluster/README.md
# --------------------------------------------------------------------------------------------


def test_cluster_readme_names_only_files_that_exist() -> None:
    text = (CLUSTER / "README.md").read_text()
    paths = set(re.findall(r"\b(cluster/[\w./-]+\.(?:yaml|json|md)|cluster/Dockerfile)\b", text))
    assert paths, "README names no cluster files"
    assert [p for p in sorted(paths) if not (REPO / p).exists()] == []


# --------------------------------------------------------------------------------------------
# A real multi-node Ray cluster: num_cpus=0 actor and CPU task land where the YAMLs expect
# --------------------------------------------------------------------------------------------

MULTI_NODE_SCRIPT = textwrap.dedent(
    """
    import json
    import ray
    from ray.cluster_utils import Cluster

    # Head like cluster/aws.yaml and cluster/rayjob.yaml: CPU 0. One worker node with 1 CPU.
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    worker = cluster.add_node(num_cpus=1)
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.wait_for_nodes(timeout=STARTUP_DEADLINE_S)

        @ray.remote(num_cpus=0)
        class VendorLike:
            def where(self):
                return ray.get_runtime_context().get_node_id()

        @ray.remote(num_cpus=1)
        def grade_shard_like(x):
            return ray.get_runtime_context().get_node_id(), x * 2

        actor = VendorLike.remote()
        result = {
            "head": cluster.head_node.node_id,
            "worker": worker.node_id,
            "alive_nodes": sum(n["Alive"] for n in ray.nodes()),
            "actor_node": ray.get(actor.where.remote(), timeout=STARTUP_DEADLINE_S),
            "task": ray.get(grade_shard_like.remote(21), timeout=STARTUP_DEADLINE_S),
        }
    finally:
        ray.shutdown()
        cluster.shutdown()
    print("RESULT " + json.dumps(result))
    """
).replace("STARTUP_DEADLINE_S", str(STARTUP_DEADLINE_S))  # the child cannot import tests/


@pytest.fixture(scope="module")
def multi_node_run() -> Iterator[dict[str, Any]]:
    """Run a 2-node cluster once in its own process (this process may already hold a Ray session).

    RAY_TMPDIR is private (Cluster records its address there; a stale record in the shared one
    would capture later `ray.init()` calls) and short (Ray's socket paths must fit 107 bytes).
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 makes Ray use 127.0.0.1 as every node's address.
    """
    with tempfile.TemporaryDirectory(prefix="trc", dir="/tmp") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        env.update(RAY_TMPDIR=tmp, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_AUTH_MODE="disabled")
        proc = subprocess.run([sys.executable, "-c", MULTI_NODE_SCRIPT], cwd=tmp, env=env,
                              capture_output=True, text=True, timeout=PROGRESS_DEADLINE_S)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        assert proc.returncode == 0 and lines, f"multi-node run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        yield json.loads(lines[-1][len("RESULT "):])


@pytest.mark.ray
def test_multi_node_cluster_has_a_head_and_a_worker(multi_node_run: dict[str, Any]) -> None:
    assert multi_node_run["alive_nodes"] == 2
    assert multi_node_run["head"] != multi_node_run["worker"]


@pytest.mark.ray
def test_cpu_task_runs_on_the_worker_when_the_head_has_cpu_0(multi_node_run: dict[str, Any]) -> None:
    node, value = multi_node_run["task"]
    assert value == 42 and node == multi_node_run["worker"]


@pytest.mark.ray
def test_num_cpus_0_actor_is_placed_and_answers(multi_node_run: dict[str, Any]) -> None:
    assert multi_node_run["actor_node"] in {multi_node_run["head"], multi_node_run["worker"]}
