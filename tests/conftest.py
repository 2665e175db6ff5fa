pytest_plugins = ["pytester"]

# pytester's in-process runs restore sys.modules afterwards, dropping every module first imported
# inside the run. Libraries that keep class objects across imports (cryptography's hash classes
# inside the MCP SDK, the check registry) then see two copies of one class. Importing them here,
# before any pytester run, keeps one copy for the whole session.
import cryptography.hazmat.primitives.hashes  # noqa: E402,F401
import h11  # noqa: E402,F401
import httpcore  # noqa: E402,F401  (httpx imports it lazily; its exception classes must stay one copy)
import httpx  # noqa: E402,F401
import mcp  # noqa: E402,F401
import schemathesis  # noqa: E402,F401
import starlette.applications  # noqa: E402,F401
import uvicorn  # noqa: E402,F401

import memconform.reference_impl.ump.http_app  # noqa: E402,F401
import memconform.reference_impl.ump.mcp_app  # noqa: E402,F401
import memconform.reference_impl.ump.service  # noqa: E402,F401
import memconform.suite.ump.checks  # noqa: E402,F401
import memconform.targets.http  # noqa: E402,F401
import memconform.targets.mcp  # noqa: E402,F401
import memconform.reference_impl.upp.rpc  # noqa: E402,F401
import memconform.reference_impl.upp.service  # noqa: E402,F401
import memconform.reference_impl.upp.stdio  # noqa: E402,F401
import memconform.suite.upp.checks  # noqa: E402,F401
import memconform.targets.jsonrpc  # noqa: E402,F401
import memconform.targets.reference  # noqa: E402,F401
import memconform.reference_impl.omf.engine  # noqa: E402,F401
import memconform.reference_impl.omf.http  # noqa: E402,F401
import memconform.suite.omf.checks  # noqa: E402,F401
import memconform.targets.cli  # noqa: E402,F401
import memconform.targets.descriptor  # noqa: E402,F401
import memconform.targets.omf_http  # noqa: E402,F401
