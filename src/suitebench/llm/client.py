"""The model client: one chat call to any OpenAI-compatible endpoint, cached, priced, retried.

Every arm that asks a model for inputs (the Auditors paper's single call, the CodeContests+
style generator and validator) goes through :class:`ModelClient`. It speaks to any endpoint
that answers ``POST {base_url}/chat/completions`` (a hosted API, vLLM, Ollama, a proxy) through
the official ``openai`` SDK (the ``llm`` extra). Three things make it fit for a benchmark:

* **Cached by request.** Every reply is stored in the suitebench store under the
  :func:`~suitebench.run.store.job_key` of what determines it (model, messages, temperature,
  max_tokens, seed), so a rerun costs nothing, needs no key and works offline. The endpoint's
  address is deliberately not part of the key: the same model behind another proxy is the
  same request.
* **Retried, not hidden.** 429s, 5xx, timeouts and dropped connections are retried with
  exponential backoff (``Retry-After`` is honoured), and each retry is reported as it happens
  (``on_retry``, stderr by default): a server that hangs must not look like a slow model. The
  defaults (:data:`DEFAULT_TIMEOUT` x (:data:`DEFAULT_RETRIES` + 1) attempts) bound a dead
  endpoint to about three minutes; what is left after ``max_retries`` is a
  :class:`ModelError` saying what failed, at which address, how many times.
* **Counted.** Tokens come from the reply's ``usage``; cost from a price table the user can
  extend (:mod:`suitebench.llm.prices`). An unpriced model's cost is ``None`` -- per reply
  and in the totals: unknown is not free.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from suitebench.llm.prices import PriceTable, load_prices
from suitebench.run.store import Store, job_key

__all__ = [
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "KIND_CHAT",
    "ModelAuthError",
    "ModelClient",
    "ModelConfigError",
    "ModelError",
    "ModelNotFoundError",
    "ModelReply",
    "ModelReplyError",
    "ModelRequestError",
    "ModelServerError",
    "ModelUnreachableError",
    "Usage",
]

KIND_CHAT = "llm-chat"
MODEL_ENV = "SUITEBENCH_MODEL"
_MAX_RETRY_AFTER = 60.0
# A reply that takes longer than a minute is a stalled server far more often than a slow
# model; three attempts then bound a dead endpoint to about three minutes (60 s x 3 + 1 s +
# 2 s of backoff) instead of the 25 minutes of longer defaults.
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2

Message = Mapping[str, str]


class ModelError(RuntimeError):
    """A model call that cannot give a reply; the message says what to do about it."""


class ModelConfigError(ModelError):
    """No model, no API key, or an unusable endpoint address: nothing was sent."""


class ModelAuthError(ModelError):
    """The endpoint refused the key (401/403)."""


class ModelNotFoundError(ModelError):
    """The endpoint does not serve this model, or has no chat completions route (404)."""


class ModelRequestError(ModelError):
    """The endpoint rejected the request itself (another 4xx): retrying will not help."""


class ModelServerError(ModelError):
    """429 or 5xx still returned after every retry."""


class ModelUnreachableError(ModelError):
    """No answer: the connection failed or timed out on every attempt."""


class ModelReplyError(ModelError):
    """An answer that is not a chat completion (not JSON, no choices, no message text)."""


@dataclass(frozen=True)
class ModelReply:
    """One chat completion: its text, its tokens, what it cost, and whether it came from the
    store (``cached``: then nothing was sent and nothing was spent this time)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    cached: bool
    model: str = ""
    finish_reason: str | None = None


@dataclass
class Usage:
    """Running totals of one client. ``cost_usd`` is the price of every reply used (cached or
    not), ``spent_usd`` of the ones actually requested this time; ``unpriced`` counts replies
    of models without a price (``unpriced_spent`` those of them requested this time).

    In :meth:`to_dict` a total that includes an unpriced reply is ``None``: a sum of the
    priced replies alone would pass an unknown cost off as a known, smaller one."""

    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    spent_usd: float = 0.0
    unpriced: int = 0
    unpriced_spent: int = 0
    retries: int = 0

    def add(self, reply: ModelReply) -> None:
        self.calls += 1
        self.cached_calls += reply.cached
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        if reply.cost_usd is None:
            self.unpriced += 1
            self.unpriced_spent += not reply.cached
        else:
            self.cost_usd += reply.cost_usd
            if not reply.cached:
                self.spent_usd += reply.cost_usd

    def copy(self) -> Usage:
        return Usage(**vars(self))

    def since(self, before: Usage) -> Usage:
        """What was added after ``before`` was copied (one arm's share of a shared client)."""
        return Usage(**{k: v - getattr(before, k) for k, v in vars(self).items()})

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cached_calls": self.cached_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": None if self.unpriced else round(self.cost_usd, 6),
            "spent_usd": None if self.unpriced_spent else round(self.spent_usd, 6),
            "unpriced_calls": self.unpriced,
            "retries": self.retries,
        }


def request_key(model: str, messages: Sequence[Message], params: Mapping[str, Any]) -> str:
    """The store key of a chat request: what determines the reply, nothing else."""
    return job_key(
        KIND_CHAT, model, [dict(m) for m in messages], {k: v for k, v in sorted(params.items())}
    )


def parse_completion(body: str | bytes, where: str) -> dict[str, Any]:
    """Check a chat completion's JSON and keep what we use; :class:`ModelReplyError` if not."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        head = body[:120] if isinstance(body, str) else body[:120].decode("utf-8", "replace")
        raise ModelReplyError(f"{where}: the reply is not JSON: {head!r}") from None
    if not isinstance(data, dict):
        raise ModelReplyError(f"{where}: the reply is JSON but not an object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelReplyError(f"{where}: the reply has no 'choices' (got keys {sorted(data)})")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise ModelReplyError(f"{where}: choices[0] has no 'message'")
    text = message.get("content")
    if text is None:
        text = ""  # a reply cut off before any text, or one made only of tool calls
    if not isinstance(text, str):
        raise ModelReplyError(f"{where}: choices[0].message.content is not text")
    usage = data.get("usage") or {}
    if not isinstance(usage, dict):
        raise ModelReplyError(f"{where}: 'usage' is not an object")

    def count(name: str) -> int:
        v = usage.get(name, 0)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ModelReplyError(f"{where}: usage.{name} is not a count (got {v!r})")
        return v

    finish = choices[0].get("finish_reason")
    return {
        "text": text,
        "prompt_tokens": count("prompt_tokens"),
        "completion_tokens": count("completion_tokens"),
        "model": str(data.get("model") or ""),
        "finish_reason": finish if isinstance(finish, str) else None,
    }


@dataclass
class ModelClient:
    """A chat client for one model. Construct directly or with :meth:`from_env`.

    ``base_url`` and ``api_key`` default to ``$OPENAI_BASE_URL`` and ``$OPENAI_API_KEY`` (the
    SDK's own variables); the key is only needed when a request is not in the store, so a
    cached rerun works with neither. ``backoff`` is the first retry's wait in seconds, doubled
    each retry. ``on_retry`` is told of every retry in one line (by default it goes to
    stderr), so a user waiting on a stalled endpoint sees why.
    """

    model: str
    _: KW_ONLY
    base_url: str | None = None
    api_key: str | None = None
    store: Store | None = None
    max_retries: int = DEFAULT_RETRIES
    timeout: float = DEFAULT_TIMEOUT
    backoff: float = 1.0
    on_retry: Callable[[str], None] | None = field(default=None, repr=False)
    prices: PriceTable = field(default_factory=load_prices)
    usage: Usage = field(default_factory=Usage)
    _sdk: Any = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if not self.model or not self.model.strip():
            raise ModelConfigError(f"no model given: pass --model or set ${MODEL_ENV}")
        if self.max_retries < 0 or self.timeout <= 0 or self.backoff < 0:
            raise ModelConfigError("max_retries >= 0, timeout > 0 and backoff >= 0 are needed")
        if self.base_url is None:
            self.base_url = os.environ.get("OPENAI_BASE_URL") or None
        if self.api_key is None:
            self.api_key = os.environ.get("OPENAI_API_KEY") or None
        if self.base_url is not None and not self.base_url.startswith(("http://", "https://")):
            raise ModelConfigError(
                f"endpoint {self.base_url!r}: expected an http:// or https:// address "
                "such as http://127.0.0.1:8000/v1"
            )

    @classmethod
    def from_env(
        cls,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        store: Store | None = None,
        prices: str | os.PathLike[str] | None = None,
        **kwargs: Any,
    ) -> ModelClient:
        """A client configured like the command line: explicit values win over
        ``$SUITEBENCH_MODEL``, ``$OPENAI_BASE_URL``, ``$OPENAI_API_KEY``; ``prices`` is an
        extra price TOML file read on top of the bundled table and ``$SUITEBENCH_PRICES``."""
        return cls(
            model or os.environ.get(MODEL_ENV) or "",
            base_url=base_url,
            api_key=api_key,
            store=store,
            prices=load_prices(prices),
            **kwargs,
        )

    @property
    def endpoint(self) -> str:
        return self.base_url or "https://api.openai.com/v1"

    def _client(self) -> Any:
        if self._sdk is None:
            if not self.api_key:
                raise ModelConfigError(
                    f"no API key for {self.endpoint}: set $OPENAI_API_KEY or pass --api-key "
                    "(a local server that ignores keys accepts any value)"
                )
            try:
                import openai
            except ImportError:
                raise ModelConfigError(
                    "the openai package is missing: pip install 'suitebench[llm]'"
                ) from None
            self._sdk = openai.OpenAI(
                api_key=self.api_key,
                base_url=self.endpoint,
                max_retries=0,  # retries are ours: counted, reported and testable
                timeout=self.timeout,
            )
        return self._sdk

    def chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> ModelReply:
        """One chat completion (from the store if this exact request was made before)."""
        msgs = [dict(m) for m in messages]
        for i, m in enumerate(msgs):
            if not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
                raise ModelConfigError(f"message {i}: expected {{'role': str, 'content': str}}")
        params: dict[str, Any] = {"temperature": float(temperature)}
        if max_tokens is not None:
            params["max_tokens"] = int(max_tokens)
        if seed is not None:
            params["seed"] = int(seed)
        key = request_key(self.model, msgs, params)
        stored = self.store.get(key) if self.store is not None else None
        if stored is not None:
            reply = self._reply(stored, cached=True)
        else:
            value = self._request(msgs, params)
            if self.store is not None:
                with self._lock:
                    self.store.put(key, value, kind=KIND_CHAT)
            reply = self._reply(value, cached=False)
        with self._lock:
            self.usage.add(reply)
        return reply

    def _reply(self, value: Mapping[str, Any], *, cached: bool) -> ModelReply:
        p, c = int(value["prompt_tokens"]), int(value["completion_tokens"])
        return ModelReply(
            text=str(value["text"]),
            prompt_tokens=p,
            completion_tokens=c,
            cost_usd=self.prices.cost(self.model, p, c),
            cached=cached,
            model=str(value.get("model") or self.model),
            finish_reason=value.get("finish_reason"),
        )

    def _request(self, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
        import openai

        sdk = self._client()
        where = f"{self.endpoint} (model {self.model})"
        last = ""
        for attempt in range(self.max_retries + 1):
            wait = self.backoff * (2**attempt)
            try:
                raw = sdk.chat.completions.with_raw_response.create(
                    model=self.model, messages=messages, **params
                )
                return parse_completion(raw.http_response.text, where)
            except openai.APIStatusError as exc:
                status = exc.status_code
                detail = _error_detail(exc)
                if status in (401, 403):
                    raise ModelAuthError(
                        f"{where}: the endpoint refused the API key ({status}: {detail})"
                    ) from None
                if status == 404:
                    raise ModelNotFoundError(
                        f"{where}: not found (404: {detail}); check --model and --base-url"
                    ) from None
                if status != 429 and status < 500:
                    raise ModelRequestError(
                        f"{where}: request rejected ({status}: {detail})"
                    ) from None
                last = f"HTTP {status}: {detail}"
                wait = max(wait, _retry_after(exc.response.headers))
                kind: type[ModelError] = ModelServerError
                short = f"HTTP {status}"
            except openai.APITimeoutError:
                last = f"no reply within {self.timeout:g} s"
                short = f"timeout after {self.timeout:g} s"
                kind = ModelUnreachableError
            except openai.APIConnectionError as exc:
                cause = exc.__cause__ or exc
                last = f"cannot connect ({type(cause).__name__}: {cause})"
                short = f"cannot connect: {type(cause).__name__}"
                kind = ModelUnreachableError
            if attempt == self.max_retries:
                raise kind(f"{where}: {last}, after {attempt + 1} attempt(s)")
            with self._lock:
                self.usage.retries += 1
            report = self.on_retry if self.on_retry is not None else _print_retry
            report(f"model call failed ({short}), retry {attempt + 1}/{self.max_retries}")
            time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover


def _print_retry(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _error_detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        msg = body.get("message") or (body.get("error") or {}).get("message")
        if msg:
            return str(msg)[:200]
    try:
        return str(exc.response.text)[:200] or str(exc)
    except Exception:
        return str(exc)[:200]


def _retry_after(headers: Mapping[str, str]) -> float:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``retry-after``), capped."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        v = headers.get(name)
        if v is None:
            continue
        try:
            return min(_MAX_RETRY_AFTER, max(0.0, float(v) / scale))
        except ValueError:
            continue
    return 0.0
