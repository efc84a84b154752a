"""The exceptions the SDK raises: one class per category of the contract's error codes.

Every failure is a :class:`WorkbenchError` carrying the stable ``code`` callers match
on, the ``message`` for people, the HTTP ``status`` (``None`` when the refusal came
inside a dispatch result, or no answer arrived) and the structured ``payload``. Its
class says who has to act, as the contract's category of the code does:

- :class:`CallerError` (``caller``): fix the call; ``invalid_arguments``, ``not_found``.
- :class:`PolicyError` (``policy``): a rule refuses it; ``command_not_allowed``,
  ``person_required``, ``unauthenticated``.
- :class:`WorkbenchEnvironmentError` (``environment``): this node cannot;
  ``no_sandbox``, ``environment_mismatch``.
- :class:`DependencyError` (``dependency``): a retry may succeed; ``unavailable``, also
  raised when the node cannot be reached.
- :class:`InternalError` (``internal``): a bug; the node's logs say more.

A code the SDK does not know yet (a newer node) raises the base class itself.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from ._contract import ERROR_CODES, ErrorCategory
from .types import DispatchFailure


class WorkbenchError(Exception):
    """A refused or failed call, with the contract's stable code."""

    category: ClassVar[ErrorCategory | None] = None
    """The category of the codes this class stands for; None on the base class."""

    def __init__(self, code: str, message: str, status: int | None = None, payload: Any = None) -> None:
        super().__init__(message)
        self.code = code
        """The stable code (one of ``ErrorCode``, or one newer than this SDK)."""
        self.message = message
        """What happened and what to do, for people; never parsed."""
        self.status = status
        """The HTTP status of the refusal; None inside a dispatch result or with no answer."""
        self.payload = payload
        """The structured rest of the refusal (``unmetNeeds``, ``problems``, ...), or None."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, status={self.status!r}, message={self.message!r})"


class CallerError(WorkbenchError):
    """The call is wrong (category ``caller``): fix the call; repeating it will not help."""

    category = "caller"


class PolicyError(WorkbenchError):
    """A rule refuses a well-formed call (category ``policy``): retrying will not help."""

    category = "policy"


class WorkbenchEnvironmentError(WorkbenchError):
    """This deployment or node cannot do it (category ``environment``).

    Named so to stay clear of Python's built-in ``EnvironmentError`` (an ``OSError``).
    """

    category = "environment"


class DependencyError(WorkbenchError):
    """Something the workbench depends on failed (category ``dependency``): a retry may succeed.

    Also raised, with code ``unavailable`` and no status, when the node cannot be reached.
    """

    category = "dependency"


class InternalError(WorkbenchError):
    """A bug in the workbench (category ``internal``); details are in the node's logs."""

    category = "internal"


CATEGORY_CLASSES: dict[ErrorCategory, type[WorkbenchError]] = {
    "caller": CallerError,
    "policy": PolicyError,
    "environment": WorkbenchEnvironmentError,
    "dependency": DependencyError,
    "internal": InternalError,
}
"""The class of each category."""


def error_class(code: str) -> type[WorkbenchError]:
    """The class a code is raised as: its category's, or the base class for an unknown code."""
    known = ERROR_CODES.get(code)
    return WorkbenchError if known is None else CATEGORY_CLASSES[known[0]]


def error_for(code: str, message: str, status: int | None = None, payload: Any = None) -> WorkbenchError:
    """The exception for a code, of its category's class."""
    return error_class(code)(code, message, status, payload)


def error_from_failure(failure: DispatchFailure, status: int | None = None) -> WorkbenchError:
    """The exception for a failed dispatch result (``{ok: false, errorCode, message, payload?}``)."""
    return error_for(failure["errorCode"], failure["message"], status, failure.get("payload"))


# The code assumed for an error answer without a readable errorCode (a proxy's page).
_STATUS_CODES = {400: "invalid_arguments", 401: "unauthenticated", 403: "forbidden", 404: "not_found"}
_STATUS_CODES.update({409: "run_ended", 413: "payload_too_large"})
_STATUS_CODES.update({502: "unavailable", 503: "unavailable", 504: "unavailable"})


def error_from_response(status: int, body: bytes) -> WorkbenchError:
    """The exception for a non-2xx answer: its ``errorCode`` when the body has one, else from the status."""
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("errorCode"), str) and parsed["errorCode"]:
        message = parsed.get("message")
        text = message if isinstance(message, str) and message else parsed["errorCode"]
        return error_for(parsed["errorCode"], text, status, parsed.get("payload"))
    code = _STATUS_CODES.get(status, "internal")
    snippet = body[:200].decode("utf-8", "replace").strip()
    return error_for(code, f"{code}: HTTP {status}{': ' + snippet if snippet else ''}", status)


def unreachable(base_url: str, cause: BaseException) -> DependencyError:
    """The exception for a request that got no answer: the address and the low-level reason."""
    return DependencyError(
        "unavailable",
        f"unavailable: cannot reach {base_url} ({type(cause).__name__}: {cause}); "
        "is the node running at that address?",
    )


def not_shaped(what: str, expected: str) -> InternalError:
    """The exception for an answer that is not what the route gives."""
    return InternalError(
        "internal",
        f"internal: {what} did not answer with {expected}; is the address an agent node's API?",
    )
